//! Xilinx `.bit` files: the header that says which design, part, date and
//! time a bitstream is, and the configuration data behind it (what goes into
//! the flash). Format (BOARDS.md §5, after Corundum's and openFPGALoader's
//! parsers): a big-endian 16-bit length and that many opaque bytes, a 2-byte
//! field, then tagged fields: 'a' design name, 'b' part, 'c' date, 'd' time,
//! each a 16-bit big-endian length and a NUL-terminated string, and 'e' a
//! 32-bit big-endian length and the raw configuration data. Vivado appends
//! `;UserID=0x...;Version=<vivado>` to the design name.
//!
//! The part check ([`part_matches`]) is the strict form BOARDS.md §5 offers:
//! device and package must be the card's; speed grade and temperature too
//! where the file names them.

/// The opaque first field Vivado and ISE write, and the 2-byte field after it.
const FIELD0: [u8; 9] = [0x0f, 0xf0, 0x0f, 0xf0, 0x0f, 0xf0, 0x0f, 0xf0, 0x00];
const FIELD1: [u8; 2] = [0x00, 0x01];

/// A `.bit` file's header and data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BitFile {
    /// Field 'a', the design name without Vivado's `;key=value` suffixes.
    pub design: String,
    /// The `;key=value` pairs after the design name (UserID, Version, ...).
    pub attributes: Vec<(String, String)>,
    /// Field 'b', the part (e.g. "xcu250-figd2104-2L-e").
    pub part: String,
    /// Fields 'c' and 'd', as the tool wrote them (e.g. "2024/01/31", "12:34:56").
    pub date: String,
    pub time: String,
    /// Field 'e': the configuration data, written to the flash as is.
    pub data: Vec<u8>,
}

/// What is wrong with a `.bit` file.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BitfileError {
    #[error("not a Xilinx .bit file: {0}")]
    NotBit(String),
    #[error("the .bit file ends inside its header ({0}): the file is truncated")]
    Truncated(&'static str),
    #[error("the .bit file has no '{0}' field ({1})")]
    Missing(char, &'static str),
    #[error(
        "the .bit file's data is {found} bytes, its header says {declared}: the file is truncated"
    )]
    ShortData { declared: usize, found: usize },
}

impl BitFile {
    /// Parses a whole `.bit` file. Bytes after the declared data are ignored
    /// (with a warning in the log); fewer are an error.
    pub fn parse(bytes: &[u8]) -> Result<BitFile, BitfileError> {
        let mut r = Reader { bytes, at: 0 };
        let len0 = r.u16("first field's length")? as usize;
        if len0 > 64 {
            return Err(BitfileError::NotBit(format!(
                "its first field is {len0} bytes long (Xilinx tools write 9)"
            )));
        }
        r.take(len0, "first field")?;
        r.take(2, "second field")?;
        let mut fields: [Option<String>; 4] = Default::default();
        loop {
            let key = r.take(1, "field key")?[0];
            match key {
                b'a'..=b'd' => {
                    let n = r.u16("field length")? as usize;
                    let raw = r.take(n, "field")?;
                    let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
                    fields[(key - b'a') as usize] =
                        Some(String::from_utf8_lossy(&raw[..end]).into_owned());
                }
                b'e' => {
                    let declared = r.u32("data length")? as usize;
                    let rest = &bytes[r.at..];
                    if rest.len() < declared {
                        return Err(BitfileError::ShortData {
                            declared,
                            found: rest.len(),
                        });
                    }
                    if rest.len() > declared {
                        tracing::warn!(
                            extra = rest.len() - declared,
                            "bytes after the .bit file's data ignored"
                        );
                    }
                    let [a, b, c, d] = fields;
                    let a = a.ok_or(BitfileError::Missing('a', "design name"))?;
                    let mut parts = a.split(';');
                    let design = parts.next().unwrap_or("").to_string();
                    let attributes = parts
                        .filter_map(|kv| {
                            kv.split_once('=')
                                .map(|(k, v)| (k.to_string(), v.to_string()))
                        })
                        .collect();
                    return Ok(BitFile {
                        design,
                        attributes,
                        part: b.ok_or(BitfileError::Missing('b', "part"))?,
                        date: c.ok_or(BitfileError::Missing('c', "date"))?,
                        time: d.ok_or(BitfileError::Missing('d', "time"))?,
                        data: rest[..declared].to_vec(),
                    });
                }
                other => {
                    return Err(BitfileError::NotBit(format!(
                        "unknown field key {other:#04x} at byte {}",
                        r.at - 1
                    )))
                }
            }
        }
    }

    /// The file's bytes, as Vivado lays them out.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend((FIELD0.len() as u16).to_be_bytes());
        v.extend(FIELD0);
        v.extend(FIELD1);
        let mut design = self.design.clone();
        for (k, val) in &self.attributes {
            design.push_str(&format!(";{k}={val}"));
        }
        for (key, s) in [
            (b'a', &design),
            (b'b', &self.part),
            (b'c', &self.date),
            (b'd', &self.time),
        ] {
            v.push(key);
            v.extend((s.len() as u16 + 1).to_be_bytes());
            v.extend(s.as_bytes());
            v.push(0);
        }
        v.push(b'e');
        v.extend((self.data.len() as u32).to_be_bytes());
        v.extend(&self.data);
        v
    }

    /// The board a homa-nic build is for: "u250" of a design named "homa_u250".
    pub fn homa_board(&self) -> Option<&str> {
        self.design.strip_prefix("homa_")
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], BitfileError> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or(BitfileError::Truncated(what))?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn u16(&mut self, what: &'static str) -> Result<u16, BitfileError> {
        Ok(u16::from_be_bytes(self.take(2, what)?.try_into().unwrap()))
    }
    fn u32(&mut self, what: &'static str) -> Result<u32, BitfileError> {
        Ok(u32::from_be_bytes(self.take(4, what)?.try_into().unwrap()))
    }
}

/// Whether a `.bit` file's part `file` fits a card whose part is `card`:
/// case-insensitive, a leading "xc" optional; device and package must be
/// given and equal; speed grade and temperature grade must be equal where the
/// file gives them.
pub fn part_matches(file: &str, card: &str) -> bool {
    let fields = |p: &str| -> Vec<String> {
        let p = p.trim().to_ascii_lowercase();
        let p = p.strip_prefix("xc").unwrap_or(&p).to_string();
        p.split('-').map(str::to_string).collect()
    };
    let (f, c) = (fields(file), fields(card));
    f.len() >= 2 && f.len() <= c.len() && f.iter().zip(&c).all(|(a, b)| a == b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> BitFile {
        BitFile {
            design: "homa_u250".into(),
            attributes: vec![
                ("UserID".into(), "0XFFFFFFFF".into()),
                ("Version".into(), "2023.2".into()),
            ],
            part: "xcu250-figd2104-2L-e".into(),
            date: "2026/12/03".into(),
            time: "12:00:00".into(),
            data: (0..300u32).map(|i| i as u8).collect(),
        }
    }

    #[test]
    fn a_written_file_parses_back_and_starts_as_vivados_do() {
        let b = sample();
        let bytes = b.to_bytes();
        assert_eq!(
            bytes[..16],
            [0x00, 0x09, 0x0f, 0xf0, 0x0f, 0xf0, 0x0f, 0xf0, 0x0f, 0xf0, 0x00, 0x00, 0x01, b'a', 0x00, 0x2b],
            "the prefix every Xilinx .bit starts with, then 'a' and its length (42 bytes and a NUL)"
        );
        assert_eq!(BitFile::parse(&bytes), Ok(b.clone()));
        assert_eq!(b.homa_board(), Some("u250"));
    }

    #[test]
    fn truncated_and_foreign_files_are_refused_with_the_reason() {
        let bytes = sample().to_bytes();
        assert!(matches!(
            BitFile::parse(&bytes[..bytes.len() - 1]),
            Err(BitfileError::ShortData {
                declared: 300,
                found: 299
            })
        ));
        assert!(matches!(
            BitFile::parse(&bytes[..20]),
            Err(BitfileError::Truncated(_))
        ));
        assert!(matches!(
            BitFile::parse(b"\x7fELF\x02\x01\x01\0\0\0\0\0\0"),
            Err(BitfileError::NotBit(_))
        ));
    }

    #[test]
    fn parts_match_on_device_and_package_and_grades_given() {
        let card = "xcu250-figd2104-2L-e";
        assert!(part_matches("xcu250-figd2104-2L-e", card));
        assert!(part_matches("XCU250-FIGD2104-2l-E", card));
        assert!(part_matches("u250-figd2104", card));
        assert!(!part_matches("xcu250", card), "no package");
        assert!(!part_matches("xcu200-fsgd2104-2-e", card));
        assert!(
            !part_matches("xcu250-figd2104-2-e", card),
            "other speed grade"
        );
        assert!(!part_matches(
            "xcu55c-fsvh2892-2L-e",
            "xcu280-fsvh2892-2L-e"
        ));
    }
}
