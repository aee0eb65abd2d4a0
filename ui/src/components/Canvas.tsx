// A denoising model's replies: the canvas forming while it denoises, and its parameters.
import type { CanvasUpdate, DenoisingParams } from '../ipc';

/**
 * The canvas as the latest denoising step left it, below the reply's text so far: the tokens
 * the sampler accepted solid, the model's current guesses for the rest faint. Its text is the
 * model's: drawn as plain text nodes, never as HTML or markdown.
 */
export function FormingCanvas({ canvas }: { canvas: CanvasUpdate }) {
  const accepted = canvas.pieces.filter((piece) => piece.accepted).length;
  return (
    <div
      className="forming-canvas"
      data-testid="forming-canvas"
      data-canvas={canvas.index}
      data-steps={canvas.steps}
      title={`Canvas ${canvas.index + 1}, step ${canvas.steps}: ${accepted} of ${canvas.pieces.length} tokens accepted`}
    >
      {canvas.pieces.map((piece, index) => (
        // Positions are fixed for the canvas's life: the index is a stable key.
        <span key={index} className={piece.accepted ? 'canvas-accepted' : 'canvas-guess'} data-accepted={piece.accepted}>
          {piece.text}
        </span>
      ))}
    </div>
  );
}

/** "3 canvases · 14.3 steps per canvas" for a denoising reply's stats; null for other replies. */
export function canvasStatsText(stepsPerCanvas: readonly number[] | undefined): string | null {
  if (!stepsPerCanvas || stepsPerCanvas.length === 0) return null;
  const n = stepsPerCanvas.length;
  const mean = stepsPerCanvas.reduce((sum, steps) => sum + steps, 0) / n;
  const steps = Number.isInteger(mean) ? String(mean) : mean.toFixed(1);
  return `${n} ${n === 1 ? 'canvas' : 'canvases'} · ${steps} steps per canvas`;
}

/** What each denoising parameter means, in the order Settings lists them. */
export function denoisingRows(params: DenoisingParams): [string, string][] {
  const stop =
    params.stability_threshold === 0
      ? `when the mean entropy falls below ${params.confidence_threshold}`
      : `after ${params.stability_threshold} unchanged steps with a mean entropy below ${params.confidence_threshold}`;
  return [
    ['Canvas length', `${params.canvas_length} tokens written in parallel`],
    ['Steps per canvas', `at most ${params.max_steps}; a canvas stops early ${stop}`],
    ['Entropy bound', `${params.entropy_bound}: each step keeps the most certain tokens within it, and renoises the rest`],
    ['Temperature', `${params.t_max} at the first step, falling to ${params.t_min}`],
  ];
}

/** A denoising model's parameters in Settings, where token samplers show top-p and top-k. */
export function DenoisingSettings({ name, params }: { name: string; params: DenoisingParams }) {
  return (
    <div className="denoising-params" data-testid="denoising-params">
      <p className="field-hint muted">
        {name} writes by denoising whole canvases, so temperature, top-p, top-k, min-p and the repetition penalty do not apply. Its
        parameters come from the model's generation_config.json; the seed and max tokens still apply.
      </p>
      <dl>
        {denoisingRows(params).map(([label, text]) => (
          <div key={label} className="denoising-param">
            <dt>{label}</dt>
            <dd>{text}</dd>
          </div>
        ))}
      </dl>
    </div>
  );
}
