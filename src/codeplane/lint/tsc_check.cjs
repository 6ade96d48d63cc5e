// CodePlane's tsc check: `node tsc_check.cjs <tsc executable>`, run in the directory of a tsconfig.json. It prints
// what the project's own build prints (`tsc --pretty false` lines, tsc's exit code) and writes nothing to disk.
//
// Why not `tsc --noEmit -p .`: for a project with `references`, tsc -p checks against the referenced projects'
// BUILT .d.ts files (TS6305 on a fresh clone, a stale "ok" after an edit to a referenced package), a solution
// config (`"files": []` + references) checks nothing, and a composite or incremental project writes its
// .tsbuildinfo even with --noEmit. `tsc -b --noEmit` is refused ("TS6310 Referenced project may not disable emit").
//
// So a project with references (or a composite one) is built as `tsc -b --force` does, and a plain project is
// checked as `tsc --noEmit -p .` does, both through TypeScript's own command line (`executeCommandLine`) over a
// `System` whose writes stay in memory: the referenced projects' .d.ts files a dependent reads are the ones this
// run emitted from the sources, and the .tsbuildinfo files on disk are never read (every project is checked
// from its sources, as --force asks).
'use strict';
const fs = require('fs');
const path = require('path');

// Exit code for "could not check": none of tsc's (0 clean, 1-2 diagnostics, 3-4 an invalid project or a reference
// cycle under -b), so the run is `failed` with this script's stderr as its message.
const CANNOT_CHECK = 70;
const exe = process.argv[2] || 'tsc';

// The typescript package `exe` belongs to: <typescript>/bin/tsc, which npm's and yarn's node_modules/.bin/tsc link
// to; pnpm's .bin/tsc is a shell script that runs the project's node_modules/typescript.
function loadTypeScript() {
  const errors = [];
  const candidates = [
    () => path.join(path.dirname(path.dirname(fs.realpathSync(exe))), 'lib', 'typescript.js'),
    () => require.resolve('typescript/lib/typescript.js', {paths: [path.dirname(path.resolve(exe))]}),
  ];
  for (const candidate of candidates) {
    try {
      return require(candidate());
    } catch (err) {
      errors.push(err.message.split('\n')[0]);
    }
  }
  process.stderr.write(`cannot load the TypeScript package of ${exe} (${errors.join('; ')}); CodePlane checks a `
    + 'TypeScript project through the typescript npm package its tsc belongs to\n');
  process.exit(CANNOT_CHECK);
}
const ts = loadTypeScript();
if (typeof ts.executeCommandLine !== 'function' || typeof ts.getParsedCommandLineOfConfigFile !== 'function') {
  process.stderr.write(`TypeScript ${ts.version} has no executeCommandLine API; upgrade typescript in the project\n`);
  process.exit(CANNOT_CHECK);
}

const disk = ts.sys;
const written = new Map();
const key = (p) => path.resolve(p);
// Build info on disk describes an earlier build; this run starts from the sources.
const hidden = (p) => !written.has(key(p)) && p.endsWith('.tsbuildinfo');
const sys = {
  ...disk,
  writeFile(p, data) { written.set(key(p), {data, time: new Date()}); },
  createDirectory() {},
  deleteFile(p) { written.delete(key(p)); },
  setModifiedTime(p, time) { const w = written.get(key(p)); if (w) w.time = time; },
  fileExists(p) { return written.has(key(p)) || (!hidden(p) && disk.fileExists(p)); },
  readFile(p, encoding) {
    const w = written.get(key(p));
    return w ? w.data : hidden(p) ? undefined : disk.readFile(p, encoding);
  },
  getModifiedTime(p) {
    const w = written.get(key(p));
    return w ? w.time : hidden(p) ? undefined : disk.getModifiedTime(p);
  },
  directoryExists(p) {
    if (disk.directoryExists(p)) return true;
    const prefix = key(p) + path.sep;
    for (const k of written.keys()) if (k.startsWith(prefix)) return true;
    return false;
  },
};

// A tsconfig.json tsc cannot read gets the plain check, which reports why.
const config = ts.getParsedCommandLineOfConfigFile(path.resolve('tsconfig.json'), {},
  {...disk, onUnRecoverableConfigFileDiagnostic() {}});
const build = Boolean(config && ((config.projectReferences || []).length > 0 || config.options.composite));
ts.executeCommandLine(sys, () => {},
  build ? ['--build', '.', '--force', '--pretty', 'false'] : ['--noEmit', '--pretty', 'false', '--project', '.']);
