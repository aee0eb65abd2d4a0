// Which media a model can take, and the friendly message when it can't.
import type { LoadedModel, ModelSummary } from '../ipc';

export type MediaKind = 'image' | 'audio' | 'video' | 'other';

/** The kind of a stored attachment, from the MIME type the engine gave it when it probed the file. */
export function mediaKindOfMime(mime: string): MediaKind {
  if (mime.startsWith('image/')) return 'image';
  if (mime.startsWith('audio/')) return 'audio';
  // Animated GIF and WebP are stored as video/gif and video/webp (the engine's MediaKind::stored_mime).
  if (mime.startsWith('video/')) return 'video';
  return 'other';
}

/**
 * Null when the loaded model can take this kind of media (or no model is loaded yet: the
 * attachment is kept for whichever model comes); otherwise a message that says so and names a
 * model that would work.
 */
/** What attachments are checked against: the loaded model, or a remote one picked. */
export type Replier = Pick<LoadedModel, 'name' | 'vision' | 'audio'>;

export function capabilityProblem(kind: MediaKind, loaded: Replier | null, models: ModelSummary[]): string | null {
  if (!loaded || kind === 'other') return null;
  const needs = kind === 'image' ? 'vision' : 'audio';
  if (loaded[needs]) return null;
  const what = loaded.vision || loaded.audio ? (kind === 'image' ? "can't see images" : "can't hear audio") : 'reads text only';
  const capable = models.find((model) => model.supported && model[needs]);
  const example = capable ? `, such as ${capable.name},` : '';
  const purpose = kind === 'image' ? 'ask about images' : 'ask about audio';
  return `${loaded.name} ${what}. Load a model with ${needs}${example} to ${purpose}.`;
}
