/* global document, uPlot, ResizeObserver */
/*
 * Draws every usage table (data-testid="usage-table") with uPlot into the chart beside it (data-testid="usage-chart"):
 * the chart shows exactly the table's numbers. Axis labels in UTC; the legend shows the hovered time in local time too.
 * Loaded as a file (no inline script: the CSP allows only 'self').
 */
(function () {
  'use strict';
  var COLORS = ['#0b57d0', '#116329', '#7a4d00', '#a40e26', '#6f42c1', '#4a5360'];

  function pad(n) {
    return n < 10 ? '0' + n : String(n);
  }
  function utcLabel(date, granularity) {
    var day = date.getUTCFullYear() + '-' + pad(date.getUTCMonth() + 1) + '-' + pad(date.getUTCDate());
    return granularity === 'day' ? day : day + ' ' + pad(date.getUTCHours()) + ':00';
  }

  function readTable(table) {
    var headers = Array.prototype.map.call(table.querySelectorAll('thead th'), function (th) {
      return th.textContent.trim();
    });
    var xs = [];
    var columns = headers.slice(1).map(function () {
      return [];
    });
    Array.prototype.forEach.call(table.querySelectorAll('tbody tr'), function (row) {
      var time = row.querySelector('time');
      if (!time) return;
      xs.push(Date.parse(time.getAttribute('datetime')) / 1000);
      Array.prototype.forEach.call(row.querySelectorAll('td'), function (cell, index) {
        if (columns[index]) columns[index].push(Number(cell.textContent.replace(/[^0-9.-]/g, '')));
      });
    });
    return { names: headers.slice(1), data: [xs].concat(columns) };
  }

  function draw(chart) {
    var figure = chart.closest('figure') || chart.parentNode;
    var table = figure.querySelector('table[data-testid="usage-table"]');
    if (!table || typeof uPlot === 'undefined') return;
    var granularity = chart.getAttribute('data-granularity') || 'day';
    var parsed = readTable(table);
    if (parsed.data[0].length === 0) return;
    var width = Math.max(chart.clientWidth, 280);
    var series = [
      {
        label: 'Time',
        value: function (u, v) {
          if (v == null) return '';
          var date = new Date(v * 1000);
          return utcLabel(date, granularity) + ' UTC (local ' + date.toLocaleString() + ')';
        },
      },
    ].concat(
      parsed.names.map(function (name, index) {
        return {
          label: name,
          stroke: COLORS[index % COLORS.length],
          width: 2,
          points: { show: parsed.data[0].length < 50 },
        };
      }),
    );
    chart.textContent = '';
    var plot = new uPlot(
      {
        width: width,
        height: 260,
        series: series,
        tzDate: function (ts) {
          return uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC');
        },
        scales: { x: { time: true } },
        axes: [
          {
            stroke: '#1b1f24',
            grid: { stroke: '#e1e4e8' },
            // UTC labels, 24-hour: "11-24" for days, "13:00" (and the date at midnight) for hours.
            values: function (u, splits) {
              return splits.map(function (ts) {
                var date = new Date(ts * 1000);
                var day = pad(date.getUTCMonth() + 1) + '-' + pad(date.getUTCDate());
                if (granularity === 'day') return day;
                return date.getUTCHours() === 0 ? day : pad(date.getUTCHours()) + ':00';
              });
            },
          },
          { stroke: '#1b1f24', grid: { stroke: '#e1e4e8' } },
        ],
      },
      parsed.data,
      chart,
    );
    chart.setAttribute('data-drawn', 'true');
    // The chart follows its box (a window resized, a phone turned): never wider than the page.
    if (typeof ResizeObserver !== 'undefined') {
      new ResizeObserver(function () {
        var next = Math.max(chart.clientWidth, 280);
        if (next !== plot.width) plot.setSize({ width: next, height: 260 });
      }).observe(chart);
    }
    // The newest rows matter most: show the end of a long table first (it scrolls inside its box).
    var scroller = table.closest('.table-scroll');
    if (scroller) scroller.scrollTop = scroller.scrollHeight;
  }

  function start() {
    Array.prototype.forEach.call(document.querySelectorAll('[data-testid="usage-chart"]'), draw);
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
