import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { Plan, ReplyStats as Stats } from '../ipc';
import { droppedText, planText, ReplyStats, speculativeText } from './ReplyStats';

const base: Plan = {
  method: 'autoregressive',
  batching_declined: null,
  prompt_tokens: 120,
  reused_tokens: 0,
  reuse_source: 'none',
  resumed_from_checkpoint: null,
  checkpoints: 0,
  reuse_declined: 'the prefix cache is empty',
  chunk_size: 512,
  chunks: 1,
  media: [],
  tower_runs: 0,
  dropped_messages: 0,
  constraint: null,
  grammar_jump: false,
  grammar_jump_declined: null,
  speculative: null,
  speculative_declined: null,
  kv_bits: null,
  kv_group_size: null,
  kv_quantization_declined: null,
};

describe('planText', () => {
  it('lists each image, clip and video with where its encoding came from', () => {
    const plan: Plan = {
      ...base,
      tower_runs: 1,
      media: [
        { kind: 'image', file: 'a', hash: '3f2a9c1b04de', position: 5, soft_tokens: 63, frames: null, encoder: 'miss' },
        { kind: 'audio', file: 'b', hash: '77aa00bb11cc', position: 70, soft_tokens: 25, frames: null, encoder: 'disk' },
        { kind: 'video', file: 'c', hash: '0a1b2c3d4e5f', position: 99, soft_tokens: 16, frames: 4, encoder: 'memory' },
      ],
    };
    expect(planText(plan)).toBe(
      'processing 120 prompt tokens (cache not used: the prefix cache is empty); image 3f2a9c1b04de: encoded now; audio 77aa00bb11cc: encoder cache (disk); video 0a1b2c3d4e5f (4 frames): encoder cache (memory)',
    );
  });

  it('says nothing of media for a text prompt', () => {
    expect(planText({ ...base, reused_tokens: 100, reuse_source: 'memory' })).toBe('reused 100 of 120 prompt tokens from memory');
    expect(planText({ ...base, reused_tokens: 96, reuse_source: 'disk', resumed_from_checkpoint: { position: 96, shared: 110 } })).toBe(
      "reused 96 of 120 prompt tokens from disk (checkpoint at 96: 110 tokens matched, and this model's state cannot be cut back)",
    );
  });

  it('says when the oldest turns were left out to fit the context', () => {
    expect(droppedText(base)).toBeNull();
    expect(droppedText({ ...base, dropped_messages: 1 })).toMatch(/^1 earlier message was left out to fit the model's context/);
    expect(droppedText({ ...base, dropped_messages: 4 })).toMatch(/^4 earlier messages were left out/);
  });
});

describe('ReplyStats', () => {
  const stats: Stats = {
    prompt_tokens: 300,
    cached_tokens: 120,
    generated_tokens: 42,
    time_to_first_token_ms: 180,
    decode_tokens_per_second: 31.25,
    model: 'SmolLM2-135M-Instruct',
    speculative: null,
  };

  it('says nothing of speculative decoding for a plain reply', () => {
    render(<ReplyStats stats={stats} />);
    expect(screen.getByTestId('reply-stats').textContent).not.toMatch(/proposed/);
  });

  it('gives the method, the acceptance rate and the tokens per pass of a speculative reply', () => {
    const speculative = { method: 'prompt_lookup', proposed: 40, accepted: 30, acceptance_rate: 0.75, tokens_per_step: 4 };
    render(<ReplyStats stats={{ ...stats, speculative }} />);
    expect(screen.getByTestId('reply-stats').textContent).toMatch(
      / · prompt lookup: 30 of 40 proposed tokens kept \(75%\), 4\.0 tokens per pass$/,
    );
    const drafted = { method: 'draft_model', proposed: 9, accepted: 2, acceptance_rate: 2 / 9, tokens_per_step: 1.4444 };
    expect(speculativeText(drafted)).toBe('draft model: 2 of 9 proposed tokens kept (22%), 1.4 tokens per pass');
  });
});
