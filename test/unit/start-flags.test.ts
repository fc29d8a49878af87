import { inheritedNodeFlags } from '../../src/cli/start';

describe('durapay start', () => {
  test('when started with profiling or heap flags, then the worker and API get them, and nothing that would clash', () => {
    expect(
      inheritedNodeFlags([
        '--cpu-prof',
        '--cpu-prof-dir=/tmp/p',
        '--heap-prof',
        '--max-old-space-size=2048',
        '--inspect=9229',
        '--require',
        'tsx/cjs',
      ]),
    ).toEqual(['--cpu-prof', '--cpu-prof-dir=/tmp/p', '--heap-prof', '--max-old-space-size=2048']);
    expect(inheritedNodeFlags([])).toEqual([]);
  });
});
