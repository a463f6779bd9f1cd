/**
 * The direction of dependencies (docs/architecture.md): a module imports only from its own layer
 * or the ones below. Checked in CI (`npx depcruise src`, .ci/run) and by test/architecture.test.ts.
 * Layers by path, lowest first; modules in one layer may import one another.
 */
const LAYERS = [
  ['model', '^src/model/'],
  // The OTLP codecs (decoding and the value tables): read by the io layer and the receivers.
  ['codec', '^src/collector/(otlp-|decode-state|extending-texts)'],
  ['normalizers', '^src/normalizers/'],
  ['scenario', '^src/scenario/'],
  ['evaluate', '^src/evaluate/'],
  ['run', '^src/run/'],
  // Rules mined from traces (`toolpath suggest`), checked by the evaluator.
  ['suggest', '^src/suggest/'],
  ['io', '^src/io/'],
  ['config', '^src/config/'],
  ['judging', '^src/judging/'],
  ['processor', '^src/processor/'],
  ['collector', '^src/collector/'],
  ['demo', '^src/demo/'],
  ['entry', '^src/(index|vitest|vitest-capture)\\.ts$'],
  ['cli', '^src/cli/'],
];

/** The layer of a path: the first pattern that matches, so the codec files leave collector/. */
const above = (index) => LAYERS.slice(index + 1).map(([, path]) => path);
const rules = LAYERS.slice(0, -1).map(([name, path], index) => ({
  name: `${name}-imports-upward`,
  comment: `${name} must not import a layer above it`,
  severity: 'error',
  from: {
    path,
    // A codec file is matched by the collector pattern too: exclude the layers below from `from`.
    ...(index > 0 && { pathNot: LAYERS.slice(0, index).map(([, lower]) => lower) }),
  },
  to: { path: above(index), pathNot: LAYERS.slice(0, index + 1).map(([, same]) => same) },
}));

module.exports = {
  forbidden: [
    ...rules,
    {
      name: 'processor-and-collector-apart',
      comment: 'the two front doors share src/judging, not each other',
      severity: 'error',
      from: { path: '^src/processor/' },
      to: { path: '^src/collector/', pathNot: LAYERS[1][1] },
    },
    {
      name: 'collector-and-processor-apart',
      severity: 'error',
      from: { path: '^src/collector/', pathNot: LAYERS[1][1] },
      to: { path: '^src/processor/' },
    },
    {
      name: 'no-circular',
      comment: 'a cycle of runtime imports hides which module is the lower one (a type named back is fine)',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^(test|bench|dist|node_modules)/' },
  },
};
