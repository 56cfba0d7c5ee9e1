/**
 * Preloaded by bench/allocations.js (with --expose-gc): SIGUSR2 forces a young-generation collection, which
 * `--trace-gc-nvp` prints like any other, so the bench can bound an interval by whole collections.
 */
process.on('SIGUSR2', () => global.gc({ type: 'minor' }));
