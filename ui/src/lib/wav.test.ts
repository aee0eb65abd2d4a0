import { describe, expect, it } from 'vitest';
import { encodeWav, joinChunks, meterLevel, toInt16, WAV_HEADER_BYTES } from './wav';

const text = (bytes: Uint8Array, from: number, to: number) => String.fromCharCode(...bytes.subarray(from, to));

describe('wav', () => {
  it('writes a 16-bit mono PCM header at the capture rate', () => {
    const wav = encodeWav(new Float32Array(480), 48000);
    const view = new DataView(wav.buffer);
    expect(wav.length).toBe(WAV_HEADER_BYTES + 960);
    expect(text(wav, 0, 4)).toBe('RIFF');
    expect(view.getUint32(4, true)).toBe(wav.length - 8);
    expect(text(wav, 8, 16)).toBe('WAVEfmt ');
    expect(view.getUint32(16, true)).toBe(16);
    expect(view.getUint16(20, true)).toBe(1); // PCM
    expect(view.getUint16(22, true)).toBe(1); // mono
    expect(view.getUint32(24, true)).toBe(48000);
    expect(view.getUint32(28, true)).toBe(96000);
    expect(view.getUint16(32, true)).toBe(2);
    expect(view.getUint16(34, true)).toBe(16);
    expect(text(wav, 36, 40)).toBe('data');
    expect(view.getUint32(40, true)).toBe(960);
  });

  it('rounds a fractional rate (some devices report 44100.0001)', () => {
    const view = new DataView(encodeWav(new Float32Array(1), 44100.0001).buffer);
    expect(view.getUint32(24, true)).toBe(44100);
  });

  it('converts samples little-endian, clipping what is out of range', () => {
    const wav = encodeWav(Float32Array.from([0, 0.5, -0.5, 1, -1, 1.7, -3, NaN]), 16000);
    const view = new DataView(wav.buffer);
    const samples = Array.from({ length: 8 }, (_, i) => view.getInt16(WAV_HEADER_BYTES + i * 2, true));
    expect(samples).toEqual([0, 16384, -16384, 32767, -32768, 32767, -32768, 0]);
    // Exact to the rounding of the scale: within half a step.
    expect(Math.abs(toInt16(0.123) - 0.123 * 32767)).toBeLessThanOrEqual(0.5);
  });

  it('joins capture chunks in order', () => {
    expect(Array.from(joinChunks([Float32Array.from([1, 2]), new Float32Array(0), Float32Array.from([3])]))).toEqual([1, 2, 3]);
    expect(joinChunks([]).length).toBe(0);
  });

  it('meters loudness in decibels: silence 0, full scale 1, -20 dB two thirds', () => {
    expect(meterLevel(new Float32Array(64))).toBe(0);
    expect(meterLevel(new Float32Array(0))).toBe(0);
    expect(meterLevel(new Float32Array(64).fill(1))).toBe(1);
    expect(meterLevel(new Float32Array(64).fill(0.1))).toBeCloseTo(2 / 3, 5);
    expect(meterLevel(new Float32Array(64).fill(1e-5))).toBe(0);
  });
});
