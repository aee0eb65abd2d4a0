import { describe, expect, it } from 'vitest';
import { gemmaLoaded, models, qwenVlLoaded, smolLoaded } from '../test/fixtures';
import { capabilityProblem, mediaKindOfMime, recordingProblem } from './capabilities';

describe('capabilities', () => {
  it('tells media kinds from the MIME type the engine gave', () => {
    expect(mediaKindOfMime('audio/wav')).toBe('audio');
    expect(mediaKindOfMime('image/jpeg')).toBe('image');
    expect(mediaKindOfMime('application/pdf')).toBe('other');
    expect(mediaKindOfMime('video/mp4')).toBe('video');
    // A moving GIF is stored as a video; a still one stays an image.
    expect(mediaKindOfMime('video/gif')).toBe('video');
    expect(mediaKindOfMime('image/gif')).toBe('image');
  });

  it('lets capable models (or none loaded yet) take media', () => {
    expect(capabilityProblem('image', gemmaLoaded, models)).toBeNull();
    expect(capabilityProblem('audio', gemmaLoaded, models)).toBeNull();
    expect(capabilityProblem('image', null, models)).toBeNull();
    expect(capabilityProblem('other', smolLoaded, models)).toBeNull();
  });

  it('says what the model lacks and names one that has it', () => {
    expect(capabilityProblem('audio', smolLoaded, models)).toBe(
      'SmolLM2 reads text only. Load a model with audio, such as Gemma 4, to ask about audio.',
    );
    expect(capabilityProblem('video', gemmaLoaded, [...models, { ...models[1]!, name: 'Qwen3-VL', video: true }])).toBe(
      "Gemma 4 can't watch videos. Load a model with video, such as Qwen3-VL, to ask about videos.",
    );
    expect(capabilityProblem('video', qwenVlLoaded, models)).toBeNull();
    expect(capabilityProblem('audio', qwenVlLoaded, [])).toBe("Qwen3-VL can't hear audio. Load a model with audio to ask about audio.");
    const visionOnly = { ...gemmaLoaded, name: 'Pixie', audio: false };
    expect(capabilityProblem('audio', visionOnly, [])).toBe("Pixie can't hear audio. Load a model with audio to ask about audio.");
  });

  it('lets the microphone record only for a model that hears', () => {
    expect(recordingProblem(gemmaLoaded, models)).toBeNull();
    expect(recordingProblem(smolLoaded, models)).toBe(
      "SmolLM2 can't hear audio. Load a model with audio, such as Gemma 4, to record from the microphone.",
    );
    // Nothing loaded yet: a recording is not kept for a model to come.
    expect(recordingProblem(null, [])).toBe('No model is loaded. Load a model with audio (Gemma 4) to record from the microphone.');
  });
});
