// CodePlane's Jest reporter: one JSON line per event, appended to $CODEPLANE_JEST_EVENTS as Jest runs, so a batch
// of files run in one process (--runInBand) is watched file by file: the file running now is timed against its
// own timeout, and the files that finished before a kill keep their results (Jest writes its --json report only
// at exit). A finished file's line carries its result in the shape of a --json report's testResults entry.
'use strict';
const fs = require('fs');

class CodePlaneJestEvents {
  constructor() {
    this.file = process.env.CODEPLANE_JEST_EVENTS || '';
  }

  write(event) {
    if (this.file) fs.appendFileSync(this.file, JSON.stringify(event) + '\n');
  }

  onTestFileStart(test) {
    this.write({e: 'start', path: test.path});
  }

  onTestCaseStart(test, info) {
    this.write({e: 'case_start', path: test.path, titles: [...(info.ancestorTitles || []), info.title]});
  }

  onTestCaseResult(test, result) {
    this.write({e: 'case', path: test.path, result: assertion(result)});
  }

  onTestFileResult(test, result) {
    const failed = result.numFailingTests > 0 || Boolean(result.testExecError);
    this.write({e: 'file', path: test.path, result: {
      name: result.testFilePath,
      status: failed ? 'failed' : 'passed',
      message: result.failureMessage || '',
      startTime: result.perfStats ? result.perfStats.start : undefined,
      endTime: result.perfStats ? result.perfStats.end : undefined,
      assertionResults: (result.testResults || []).map(assertion),
    }});
  }

  getLastError() {
    return undefined;
  }
}

function assertion(result) {
  return {ancestorTitles: result.ancestorTitles, title: result.title, fullName: result.fullName,
    status: result.status, failureMessages: result.failureMessages, duration: result.duration};
}

module.exports = CodePlaneJestEvents;
