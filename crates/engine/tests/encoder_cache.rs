//! The encoder cache: hits after an insert, least-recently-used eviction by bytes, a disk
//! tier that survives a restart, damaged disk entries treated as misses and removed, and the
//! counters a request plan reports.

use std::path::Path;

use confab_engine::cache::{EncoderCache, EncoderKey, EncoderOptions, EncoderSource, EncoderStats};
use mlx_rs::{Array, Dtype};

/// A 16×16 f32 tower output (1 KiB) filled from `seed`.
fn output(seed: f32) -> Array {
    let values: Vec<f32> = (0..256).map(|i| seed + i as f32 / 256.0).collect();
    Array::from_slice(&values, &[16, 16])
}

fn values(array: &Array) -> Vec<f32> {
    array.as_dtype(Dtype::Float32).unwrap().as_slice::<f32>().to_vec()
}

fn key(hash: &str) -> EncoderKey {
    EncoderKey::new("gemma-test:vision:896px:mean0.5", hash)
}

fn memory_only(budget: usize) -> EncoderCache {
    EncoderCache::new(EncoderOptions { memory_budget: budget, dir: None, ..Default::default() })
}

fn on_disk(dir: &Path) -> EncoderCache {
    EncoderCache::new(EncoderOptions { dir: Some(dir.to_path_buf()), ..Default::default() })
}

fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

#[test]
fn a_hit_after_insert_and_a_miss_for_anything_else() {
    let mut cache = memory_only(1 << 20);
    assert_eq!(cache.lookup(&key("cat")).source, EncoderSource::Miss);
    cache.insert(key("cat"), output(1.0));
    let hit = cache.lookup(&key("cat"));
    assert_eq!(hit.source, EncoderSource::Memory);
    assert_eq!(values(&hit.output.unwrap()), values(&output(1.0)));
    // Same image through another tower (or other preprocessing) is a different entry.
    assert_eq!(cache.lookup(&EncoderKey::new("other-model:vision", "cat")).source, EncoderSource::Miss);
    assert_eq!(cache.lookup(&key("dog")).source, EncoderSource::Miss);
    assert_eq!(cache.stats(), EncoderStats { memory_hits: 1, disk_hits: 0, misses: 3, inserts: 1, evictions: 0 });
}

#[test]
fn memory_is_bounded_by_bytes_least_recently_used_first() {
    let mut cache = memory_only(3 * 1024);
    for (i, name) in ["a", "b", "c"].iter().enumerate() {
        cache.insert(key(name), output(i as f32));
    }
    assert_eq!(cache.memory_bytes(), 3 * 1024);
    assert_eq!(cache.lookup(&key("a")).source, EncoderSource::Memory); // a is now the newest
    cache.insert(key("d"), output(3.0));
    assert_eq!(cache.len(), 3);
    assert_eq!(cache.lookup(&key("b")).source, EncoderSource::Miss);
    for name in ["a", "c", "d"] {
        assert_eq!(cache.lookup(&key(name)).source, EncoderSource::Memory, "{name}");
    }
    assert_eq!(cache.stats().evictions, 1);
}

#[test]
fn the_disk_tier_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let half = output(2.0).as_dtype(Dtype::Bfloat16).unwrap();
    {
        let mut cache = on_disk(dir.path());
        cache.insert(key("cat"), output(1.0));
        cache.insert(key("dog"), half.clone());
        assert!(cache.disk_bytes() > 1024 + 512); // f32 and bf16 data, plus headers
    }
    let mut cache = on_disk(dir.path());
    assert!(cache.is_empty());
    let cat = cache.lookup(&key("cat"));
    assert_eq!(cat.source, EncoderSource::Disk);
    assert_eq!(values(&cat.output.unwrap()), values(&output(1.0)));
    let dog = cache.lookup(&key("dog")).output.unwrap();
    assert_eq!((dog.shape(), dog.dtype()), (&[16, 16][..], Dtype::Bfloat16));
    assert_eq!(values(&dog), values(&half));
    // Now in memory too.
    assert_eq!(cache.lookup(&key("cat")).source, EncoderSource::Memory);
    assert_eq!(cache.stats(), EncoderStats { memory_hits: 1, disk_hits: 2, misses: 0, inserts: 0, evictions: 0 });
}

#[test]
fn an_entry_evicted_from_memory_comes_back_from_disk() {
    let dir = tempfile::tempdir().unwrap();
    let options = EncoderOptions { memory_budget: 1024, dir: Some(dir.path().to_path_buf()), ..Default::default() };
    let mut cache = EncoderCache::new(options);
    cache.insert(key("a"), output(0.0));
    cache.insert(key("b"), output(1.0));
    assert_eq!(cache.lookup(&key("a")).source, EncoderSource::Disk);
    assert_eq!(cache.lookup(&key("a")).source, EncoderSource::Memory);
}

#[test]
fn a_damaged_disk_entry_is_a_miss_and_is_removed() {
    let dir = tempfile::tempdir().unwrap();
    on_disk(dir.path()).insert(key("cat"), output(1.0));
    let data = files(dir.path()).into_iter().find(|n| n.ends_with(".safetensors")).unwrap();
    let path = dir.path().join(&data);
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&path, bytes).unwrap();

    let mut cache = on_disk(dir.path());
    assert_eq!(cache.lookup(&key("cat")).source, EncoderSource::Miss);
    assert!(files(dir.path()).is_empty(), "{:?}", files(dir.path()));
    assert_eq!(cache.stats().misses, 1);

    // A manifest that doesn't parse is dropped when the tier opens.
    on_disk(dir.path()).insert(key("dog"), output(2.0));
    let manifest = files(dir.path()).into_iter().find(|n| n.ends_with(".json")).unwrap();
    std::fs::write(dir.path().join(manifest), "{ not json").unwrap();
    let mut cache = on_disk(dir.path());
    assert!(files(dir.path()).is_empty(), "{:?}", files(dir.path()));
    assert_eq!(cache.lookup(&key("dog")).source, EncoderSource::Miss);
}

#[test]
fn the_disk_tier_is_bounded_oldest_first() {
    let dir = tempfile::tempdir().unwrap();
    let one = {
        let mut cache = on_disk(dir.path());
        cache.insert(key("probe"), output(0.0));
        cache.disk_bytes()
    };
    std::fs::remove_dir_all(dir.path()).unwrap();
    let options = EncoderOptions { memory_budget: 0, disk_budget: 2 * one, dir: Some(dir.path().to_path_buf()), ..Default::default() };
    let mut cache = EncoderCache::new(options.clone());
    for (i, name) in ["a", "b", "c"].iter().enumerate() {
        cache.insert(key(name), output(i as f32));
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(cache.disk_bytes(), 2 * one);
    assert_eq!(files(dir.path()).len(), 4);
    let mut cache = EncoderCache::new(options);
    assert_eq!(cache.lookup(&key("a")).source, EncoderSource::Miss);
    assert_eq!(cache.lookup(&key("b")).source, EncoderSource::Disk);
    assert_eq!(cache.lookup(&key("c")).source, EncoderSource::Disk);
}
