import { describe, expect, it } from 'vitest';

import { drawInterval } from './useChat';

describe('drawInterval', () => {
  it('waits nine draws long, between a tenth of a second and a second and a half', () => {
    expect(drawInterval(0)).toBe(100);
    expect(drawInterval(10)).toBe(100);
    expect(drawInterval(40)).toBe(360);
    expect(drawInterval(100)).toBe(900);
    expect(drawInterval(2000)).toBe(1500);
  });
});
