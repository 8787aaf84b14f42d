//! LEB128 varints: seven bits a byte, low first, the high bit set on every byte but the last.
//! The packed index (`bm25`'s posting lists and forward index, `index`'s names a file defines)
//! and the saved index (`store`, which reads its untrusted bytes with checks of its own) write
//! numbers this way; most are gaps under 128, one byte each.

pub fn put(out: &mut Vec<u8>, v: impl Into<u64>) {
    let mut v = v.into();
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The varint at `*at` of bytes this process wrote (never untrusted bytes: no bounds beyond
/// the slice's own); `*at` moves past it.
#[inline(always)]
pub fn get(b: &[u8], at: &mut usize) -> u32 {
    // Most gaps and counts take one byte: that path is the posting loop of every question.
    let first = b[*at];
    *at += 1;
    if first < 0x80 {
        return first as u32;
    }
    let (mut v, mut shift) = ((first & 0x7f) as u32, 7);
    loop {
        let x = b[*at];
        *at += 1;
        v |= ((x & 0x7f) as u32) << shift;
        if x < 0x80 {
            return v;
        }
        shift += 7;
    }
}

/// Append numbers, rising, each as its gap from the one before (the first as it is).
pub fn put_rising(out: &mut Vec<u8>, ids: impl IntoIterator<Item = u32>) {
    let mut prev = 0;
    for id in ids {
        put(out, id - prev);
        prev = id;
    }
}

/// The numbers `put_rising` wrote, rising.
pub fn rising(b: &[u8]) -> impl Iterator<Item = u32> + '_ {
    let (mut at, mut prev) = (0, 0u32);
    std::iter::from_fn(move || {
        (at < b.len()).then(|| {
            prev += get(b, &mut at);
            prev
        })
    })
}

/// How many varints `b` holds: one ends at each byte under 0x80.
pub fn count(b: &[u8]) -> usize {
    b.iter().filter(|x| **x < 0x80).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_width_reads_back() {
        let values = [
            0u32,
            1,
            127,
            128,
            300,
            16_383,
            16_384,
            1 << 21,
            1 << 28,
            u32::MAX,
        ];
        let mut b = Vec::new();
        for v in values {
            put(&mut b, v);
        }
        assert_eq!(count(&b), values.len());
        let mut at = 0;
        for v in values {
            assert_eq!(get(&b, &mut at), v);
        }
        assert_eq!(at, b.len());
    }
}
