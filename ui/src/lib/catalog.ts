// The curated models Get models offers first: the one list of them. Only repositories of
// families and formats the engine runs (MLX 4-bit or bf16 folders; GGUF where the engine reads
// that architecture's GGUF: llama, qwen2, qwen3). Repository ids only; sizes and files come from
// the hub when one is opened.

export interface CatalogModel {
  repo: string;
  /** What it is, in a few words. */
  note: string;
  format: 'MLX' | 'GGUF' | 'safetensors';
  vision?: boolean;
  audio?: boolean;
  /** Gives vectors, not replies: it searches documents too large for the context. */
  embedding?: boolean;
}

export const CATALOG: CatalogModel[] = [
  { repo: 'HuggingFaceTB/SmolLM2-135M-Instruct', note: 'SmolLM2 135M: tiny and fast, for a first try', format: 'safetensors' },
  { repo: 'HuggingFaceTB/SmolLM2-360M-Instruct', note: 'SmolLM2 360M', format: 'safetensors' },
  { repo: 'HuggingFaceTB/SmolLM2-1.7B-Instruct', note: 'SmolLM2 1.7B', format: 'safetensors' },
  { repo: 'mlx-community/SmolLM2-1.7B-Instruct-4bit', note: 'SmolLM2 1.7B, 4-bit', format: 'MLX' },
  { repo: 'bartowski/SmolLM2-1.7B-Instruct-GGUF', note: 'SmolLM2 1.7B', format: 'GGUF' },
  { repo: 'mlx-community/Qwen3-4B-4bit', note: 'Qwen3 4B, 4-bit', format: 'MLX' },
  { repo: 'mlx-community/Qwen3-8B-4bit', note: 'Qwen3 8B, 4-bit', format: 'MLX' },
  { repo: 'Qwen/Qwen3-4B-GGUF', note: 'Qwen3 4B', format: 'GGUF' },
  { repo: 'Qwen/Qwen3-8B-GGUF', note: 'Qwen3 8B', format: 'GGUF' },
  { repo: 'mlx-community/Qwen3.5-4B-4bit', note: 'Qwen3.5 4B, 4-bit', format: 'MLX', vision: true },
  { repo: 'mlx-community/Qwen3.5-9B-4bit', note: 'Qwen3.5 9B, 4-bit', format: 'MLX', vision: true },
  { repo: 'mlx-community/gemma-3-4b-it-4bit', note: 'Gemma 3 4B, 4-bit', format: 'MLX', vision: true },
  { repo: 'mlx-community/gemma-3-12b-it-4bit', note: 'Gemma 3 12B, 4-bit', format: 'MLX', vision: true },
  { repo: 'mlx-community/gemma-4-e4b-it-4bit', note: 'Gemma 4 E4B, 4-bit', format: 'MLX', vision: true, audio: true },
  { repo: 'mlx-community/gemma-4-e2b-it-4bit', note: 'Gemma 4 E2B, 4-bit', format: 'MLX', vision: true, audio: true },
  // The default embedding model (embedder.rs names it in its messages).
  { repo: 'Qwen/Qwen3-Embedding-0.6B', note: 'Qwen3-Embedding 0.6B: searches long documents', format: 'safetensors', embedding: true },
];
