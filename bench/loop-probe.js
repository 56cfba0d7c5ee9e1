/**
 * Preloaded into an app by the bench (`--require`, with BENCH_LOOP_PROBE_FILE set). Idle until the app gets
 * SIGUSR2 (the probe's 1 ms timer must not weigh on the other scenarios' CPU figures), then every second one JSON line
 * with the event loop's delay over that second (perf_hooks.monitorEventLoopDelay, 1 ms resolution: p50, p99,
 * max) and the garbage collections in it (count and total pause by kind, the longest pause), so that a bench
 * can say what paused the process while it measured a latency tail. Not part of the apps.
 */
const { appendFileSync } = require('node:fs');
const { monitorEventLoopDelay, PerformanceObserver } = require('node:perf_hooks');
const { setInterval, clearInterval } = require('node:timers');

const file = process.env.BENCH_LOOP_PROBE_FILE;
if (file) {
  const KINDS = { 1: 'minor', 2: 'major', 4: 'incremental', 8: 'weakcb' };
  const delay = monitorEventLoopDelay({ resolution: 1 });
  let gc = { count: 0, pauseMs: 0, maxMs: 0, byKind: {} };
  const ms = (ns) => +(ns / 1e6).toFixed(2);
  let timer;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = KINDS[entry.detail?.kind] ?? String(entry.detail?.kind);
      gc.count += 1;
      gc.pauseMs += entry.duration;
      gc.maxMs = Math.max(gc.maxMs, entry.duration);
      gc.byKind[kind] = (gc.byKind[kind] ?? 0) + entry.duration;
    }
  });
  process.on('SIGUSR2', () => {
    if (timer) {
      clearInterval(timer);
      timer = undefined;
      delay.disable();
      observer.disconnect();
      return;
    }
    delay.reset();
    delay.enable();
    observer.observe({ entryTypes: ['gc'] });
    gc = { count: 0, pauseMs: 0, maxMs: 0, byKind: {} };
    timer = setInterval(() => {
      const line = {
        at: Date.now(),
        delay: { p50: ms(delay.percentile(50)), p99: ms(delay.percentile(99)), max: ms(delay.max) },
        gc,
      };
      appendFileSync(file, `${JSON.stringify(line)}\n`);
      delay.reset();
      gc = { count: 0, pauseMs: 0, maxMs: 0, byKind: {} };
    }, 1000).unref();
  });
}
