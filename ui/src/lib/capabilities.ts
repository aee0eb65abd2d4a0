// Which media a model can take, and the friendly message when it can't.
import type { LoadedModel, ModelSummary } from '../ipc';

export type MediaKind = 'image' | 'audio' | 'other';

const imageExtensions = ['png', 'jpg', 'jpeg', 'gif', 'webp', 'bmp', 'tif', 'tiff', 'heic', 'heif', 'avif'];
const audioExtensions = ['wav', 'mp3', 'm4a', 'aac', 'flac', 'ogg', 'oga', 'opus', 'aif', 'aiff', 'webm'];

export function mediaKindOfMime(mime: string): MediaKind {
  if (mime.startsWith('image/')) return 'image';
  if (mime.startsWith('audio/')) return 'audio';
  return 'other';
}

/** Dropped files arrive as paths only, so their kind comes from the extension. */
export function mediaKindOfPath(path: string): MediaKind {
  const extension = path.split('.').pop()?.toLowerCase() ?? '';
  if (imageExtensions.includes(extension)) return 'image';
  if (audioExtensions.includes(extension)) return 'audio';
  return 'other';
}

/** A MIME type for a picked or pasted file the browser could not type. */
export function guessMime(name: string): string {
  const extension = name.split('.').pop()?.toLowerCase() ?? '';
  if (mediaKindOfPath(name) === 'image') return `image/${extension === 'jpg' ? 'jpeg' : extension}`;
  if (mediaKindOfPath(name) === 'audio') return `audio/${extension === 'mp3' ? 'mpeg' : extension}`;
  return 'application/octet-stream';
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
