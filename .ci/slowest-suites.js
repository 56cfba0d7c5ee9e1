// Prints the slowest test files of a Jest run (its --json report), so the CI log says where a pass's time goes.
// Usage: node .ci/slowest-suites.js REPORT.json [COUNT]. Jest's report calls a file that passed with some tests skipped
// "focused"; it is printed as what it is.
const { readFileSync } = require('node:fs');

const [file, count = '12'] = process.argv.slice(2);
const report = JSON.parse(readFileSync(file, 'utf8'));
const suites = report.testResults
  .map((suite) => ({
    seconds: (suite.endTime - suite.startTime) / 1000,
    name: suite.name.replace(`${process.cwd()}/`, ''),
    status: suite.status,
  }))
  .sort((a, b) => b.seconds - a.seconds);
const total = suites.reduce((sum, suite) => sum + suite.seconds, 0);
console.log(`slowest test files (of ${suites.length}, ${Math.round(total)} s summed over the workers):`);
for (const suite of suites.slice(0, Number(count)))
  console.log(
    `  ${suite.seconds.toFixed(1).padStart(7)} s  ${suite.status === 'passed' ? '' : `[${suite.status === 'focused' ? 'some skipped' : suite.status}] `}${suite.name}`,
  );
