/** The scenario `toolpath serve` judges by when none is configured: checks that need no tool names. */
export const DEFAULT_SCENARIO = {
  id: 'toolpath.defaults',
  version: '1',
  description:
    'Built-in checks for any agent: no use of failed results, no identical repeats, bounded retries.',
  safety: { failedResultUse: true },
  efficiency: { repeats: { max: 2 }, retries: { max: 3 } },
};
