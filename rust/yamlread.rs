//! Reading many small YAML files at once: each is parsed in parallel and handed
//! back as JSON text, which Python validates with msgspec at C speed.

use rayon::prelude::*;
use std::io::Read;

pub enum Parsed {
    Json(String),
    Missing,
    TooLarge,
    Invalid(String),
}

fn read_one(path: &str, max_bytes: u64) -> Parsed {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Parsed::Missing,
        Err(e) => return Parsed::Invalid(e.kind().to_string()),
    };
    let mut buf = Vec::new();
    // Read one byte past the cap so an oversized file is told apart from one exactly at it.
    if let Err(e) = file.take(max_bytes + 1).read_to_end(&mut buf) {
        return Parsed::Invalid(e.kind().to_string());
    }
    if buf.len() as u64 > max_bytes {
        return Parsed::TooLarge;
    }
    match serde_yaml::from_slice::<serde_json::Value>(&buf) {
        Ok(v) => Parsed::Json(v.to_string()),
        Err(e) => Parsed::Invalid(e.to_string()),
    }
}

pub fn read_many(paths: &[String], max_bytes: u64) -> Vec<Parsed> {
    paths.par_iter().map(|p| read_one(p, max_bytes)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_becomes_json_and_errors_are_reported() {
        let dir = std::env::temp_dir().join(format!("repoctx-yaml-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good.yaml");
        let bad = dir.join("bad.yaml");
        std::fs::write(&good, "version: 1\nlast_updated: 2026-02-13T10:00:00Z\nlist: [a, b]\n").unwrap();
        std::fs::write(&bad, "key: [unclosed\n").unwrap();
        let paths = vec![
            good.to_string_lossy().into_owned(),
            bad.to_string_lossy().into_owned(),
            dir.join("none.yaml").to_string_lossy().into_owned(),
        ];
        let out = read_many(&paths, 1 << 20);
        match &out[0] {
            Parsed::Json(s) => assert_eq!(s, r#"{"last_updated":"2026-02-13T10:00:00Z","list":["a","b"],"version":1}"#),
            _ => panic!("expected json"),
        }
        assert!(matches!(out[1], Parsed::Invalid(_)));
        assert!(matches!(out[2], Parsed::Missing));
        assert!(matches!(read_many(&paths[..1], 4)[0], Parsed::TooLarge));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
