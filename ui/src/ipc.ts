// Every call into the Rust side goes through this file.
import { invoke } from '@tauri-apps/api/core';

/** Mirrors `RuntimeInfo` in src-tauri/src/commands.rs. */
export interface RuntimeInfo {
  mlx: {
    version: string;
    built_against: string;
    backend: string;
    device: string;
    library: string | null;
    metallib: string | null;
  };
  paths: {
    data_dir: string;
    models_dir: string;
    cache_dir: string;
  };
  default_model: {
    name: string;
    path: string;
    present: boolean;
  };
}

/** Which MLX the app runs on, where it keeps its files, and whether the default model is there. */
export function runtimeInfo(): Promise<RuntimeInfo> {
  return call<RuntimeInfo>('runtime_info');
}

/** Commands fail with a string message; anything else (no Tauri, a bug) becomes one too. */
async function call<T>(command: string, args?: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(command, args);
  } catch (e) {
    throw new Error(errorMessage(e));
  }
}

export function errorMessage(e: unknown): string {
  if (typeof e === 'string') return e;
  if (e instanceof Error) return e.message;
  return String(e);
}
