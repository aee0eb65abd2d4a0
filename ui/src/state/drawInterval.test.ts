import { describe, expect, it } from 'vitest';

import { drawInterval } from './useChat';

describe('drawInterval', () => {
  it('waits a few draws long, between a tenth and half a second', () => {
    expect(drawInterval(0)).toBe(100);
    expect(drawInterval(16)).toBe(100);
    expect(drawInterval(40)).toBe(200);
    expect(drawInterval(100)).toBe(500);
    expect(drawInterval(2000)).toBe(500);
  });
});
