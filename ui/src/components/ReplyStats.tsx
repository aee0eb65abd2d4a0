import type { AnyPlan, MediaPlan, Plan, RemotePlan, ReplyStats as Stats, SpeculativeReplyStats } from '../ipc';
import { humanDuration } from '../lib/format';
import { canvasStatsText } from './Canvas';

const methodNames: Record<string, string> = { prompt_lookup: 'prompt lookup', draft_model: 'draft model', mtp: 'MTP head' };

/** "prompt lookup: 30 of 40 proposed tokens kept (75%), 4.0 tokens per pass". */
export function speculativeText(s: SpeculativeReplyStats): string {
  const method = methodNames[s.method] ?? s.method.replace(/_/g, ' ');
  const percent = Math.round(s.acceptance_rate * 100);
  return `${method}: ${s.accepted} of ${s.proposed} proposed tokens kept (${percent}%), ${s.tokens_per_step.toFixed(1)} tokens per pass`;
}

/** "42 tokens · 31.2 tok/s · 180 ms to first token · 120 cached" under a finished reply. A
 *  denoising model's says its canvases, and its rate is its tokens over the time its canvases
 *  took: they come a canvas at a time, not one by one. Then what speculative decoding did. */
export function ReplyStats({ stats }: { stats: Stats }) {
  const parts = [`${stats.generated_tokens} tokens`];
  const canvases = canvasStatsText(stats.steps_per_canvas);
  if (canvases) parts.push(canvases);
  if (stats.decode_tokens_per_second !== null) parts.push(`${stats.decode_tokens_per_second.toFixed(1)} tok/s`);
  if (stats.time_to_first_token_ms !== null) {
    parts.push(`${humanDuration(stats.time_to_first_token_ms)} to first ${canvases ? 'canvas' : 'token'}`);
  }
  parts.push(`${stats.cached_tokens} of ${stats.prompt_tokens} prompt tokens cached`);
  if (stats.speculative) parts.push(speculativeText(stats.speculative));
  return (
    <div className="reply-stats" data-testid="reply-stats" title={stats.model}>
      {parts.join(' · ')}
    </div>
  );
}

const encoderText: Record<MediaPlan['encoder'], string> = {
  prefix: 'in the reused prefix',
  memory: 'encoder cache (memory)',
  disk: 'encoder cache (disk)',
  miss: 'encoded now',
};

/** "image 3f2a9c1b04de: encoder cache (memory)"; a video says how many frames it read. */
export function mediaText(item: MediaPlan): string {
  const frames = item.frames == null ? '' : ` (${item.frames} frame${item.frames === 1 ? '' : 's'})`;
  return `${item.kind} ${item.hash}${frames}: ${encoderText[item.encoder]}`;
}

/** What the engine planned to reuse: "reused 120 of 300 prompt tokens from memory", then media. */
export function planText(plan: Plan): string {
  let text: string;
  if (plan.reuse_source === 'none' || plan.reused_tokens === 0) {
    const why = plan.reuse_declined ? ` (cache not used: ${plan.reuse_declined})` : '';
    text = `processing ${plan.prompt_tokens} prompt tokens${why}`;
  } else {
    text = `reused ${plan.reused_tokens} of ${plan.prompt_tokens} prompt tokens from ${plan.reuse_source}`;
    const resumed = plan.resumed_from_checkpoint;
    if (resumed) {
      text += ` (checkpoint at ${resumed.position}: ${resumed.shared} tokens matched, and this model's state cannot be cut back)`;
    }
  }
  const media = plan.media ?? [];
  return media.length === 0 ? text : `${text}; ${media.map(mediaText).join('; ')}`;
}

/** Where a provider's model wrote the reply: "written by llama-3 on Workstation (http://10.0.0.5:8000); 1 image sent". */
export function remotePlanText(plan: RemotePlan): string {
  const media = [
    plan.images && `${plan.images} image${plan.images > 1 ? 's' : ''}`,
    plan.clips && `${plan.clips} audio clip${plan.clips > 1 ? 's' : ''}`,
  ].filter(Boolean);
  const sent = media.length > 0 ? `; ${media.join(' and ')} sent as content parts` : '';
  return `written by ${plan.model} on ${plan.provider} (${plan.server}), a remote provider${sent}`;
}

/** Said above the reply when the engine left the oldest turns out to fit the context. */
export function droppedText(plan: Plan): string | null {
  const n = plan.dropped_messages;
  if (!n) return null;
  return `${n} earlier ${n === 1 ? 'message was' : 'messages were'} left out to fit the model's context; start a new chat to keep everything in view.`;
}

/** The reply's plan (the engine's, or where a provider wrote it), folded under "Details": for the curious, out of everyone's way. */
export function PlanLine({ plan }: { plan: AnyPlan }) {
  const remote = 'server' in plan;
  const dropped = remote ? null : droppedText(plan);
  return (
    <>
      {dropped && (
        <div className="context-note" data-testid="context-note">
          {dropped}
        </div>
      )}
      <details className="plan-details">
        <summary data-testid="plan-toggle">Details</summary>
        <div className="plan" data-testid="plan" data-remote={remote ? 'true' : undefined}>
          {remote ? remotePlanText(plan) : planText(plan)}
        </div>
      </details>
    </>
  );
}
