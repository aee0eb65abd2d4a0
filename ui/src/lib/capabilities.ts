// Which media a model can take, and the friendly message when it can't.
import type { ModelInfo, ModelSummary } from '../ipc';

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
 * Whether a stored attachment is a document, read as text by every model: the MIME types the
 * documents crate stores them under (confab-documents' `DocumentFormat::is_document_mime`).
 */
export function isDocumentMime(mime: string): boolean {
  return (
    mime.startsWith('text/') ||
    mime === 'application/pdf' ||
    mime === 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'
  );
}

/**
 * What the file picker offers besides media: documents by type and the common extensions (the
 * backend decides by name and bytes: confab-documents' `DocumentFormat::of_name`).
 */
export const DOCUMENT_PICKER_TYPES =
  'text/*,application/pdf,.pdf,.docx,.md,.markdown,.txt,.html,.htm,.csv,.tsv,.json,.yaml,.yml,.toml,' +
  '.rs,.py,.js,.ts,.tsx,.jsx,.go,.c,.h,.cpp,.hpp,.java,.kt,.swift,.rb,.php,.cs,.sh,.sql,.css';

/** What attachments are checked against: the loaded model, or a remote one picked. */
export type Replier = Pick<ModelInfo, 'name' | 'vision' | 'audio' | 'video'>;

/** Per kind: the model flag that reads it, what a model without it can't do, and what it is for. */
const needs = {
  image: { flag: 'vision', cannot: "can't see images", purpose: 'ask about images' },
  audio: { flag: 'audio', cannot: "can't hear audio", purpose: 'ask about audio' },
  video: { flag: 'video', cannot: "can't watch videos", purpose: 'ask about videos' },
} as const;

/**
 * Null when the loaded model can take this kind of media (or no model is loaded yet: the
 * attachment is kept for whichever model comes); otherwise a message that says so and names a
 * model that would work.
 */
export function capabilityProblem(kind: MediaKind, loaded: Replier | null, models: ModelSummary[]): string | null {
  if (!loaded || kind === 'other') return null;
  const { flag, cannot, purpose } = needs[kind];
  if (loaded[flag]) return null;
  const what = loaded.vision || loaded.audio || loaded.video ? cannot : 'reads text only';
  const capable = models.find((model) => model.supported && model[flag]);
  const example = capable ? `, such as ${capable.name},` : '';
  return `${loaded.name} ${what}. Load a model with ${flag}${example} to ${purpose}.`;
}

/**
 * Null when the microphone can be used: the model replies go to reads audio. Otherwise why
 * not, naming a model that does. Unlike a dropped file, a recording is not kept for a model
 * still to come: without one that reads audio the button is off.
 */
export function recordingProblem(loaded: Replier | null, models: ModelSummary[]): string | null {
  if (loaded?.audio) return null;
  const capable = models.find((model) => model.supported && model.audio);
  const example = capable ? `, such as ${capable.name},` : ' (Gemma 4)';
  const who = loaded ? `${loaded.name} can't hear audio` : 'No model is loaded';
  return `${who}. Load a model with audio${example} to record from the microphone.`;
}
