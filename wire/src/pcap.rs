//! libpcap capture files of Ethernet frames, as Wireshark and tcpdump read them.
//!
//! Files are written with nanosecond timestamps (magic 0xa1b23c4d) so that
//! simulated time, counted in 4 ns cycles, survives exactly. Both microsecond
//! and nanosecond files are read.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;
use std::time::Duration;

use pcap_file::pcap::{PcapHeader, PcapPacket, PcapReader, PcapWriter};
use pcap_file::{DataLink, Endianness, TsResolution};

/// An error reading or writing a capture file.
#[derive(Debug, thiserror::Error)]
pub enum PcapError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("pcap format: {0}")]
    Format(#[from] pcap_file::PcapError),
    #[error("link type {0:?} is not Ethernet; only Ethernet captures are supported")]
    LinkType(DataLink),
}

/// One captured frame and when it was seen, from the start of the capture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CapturedFrame {
    pub timestamp: Duration,
    pub bytes: Vec<u8>,
}

/// Writes Ethernet frames to a pcap file.
pub struct FrameWriter<W: Write> {
    inner: PcapWriter<W>,
}

impl FrameWriter<BufWriter<File>> {
    /// Creates (or truncates) `path`.
    pub fn create(path: impl AsRef<Path>) -> Result<Self, PcapError> {
        let path = path.as_ref();
        let file = File::create(path).map_err(|source| PcapError::Io {
            path: path.display().to_string(),
            source,
        })?;
        FrameWriter::new(BufWriter::new(file))
    }
}

impl<W: Write> FrameWriter<W> {
    pub fn new(writer: W) -> Result<Self, PcapError> {
        let header = PcapHeader {
            datalink: DataLink::ETHERNET,
            ts_resolution: TsResolution::NanoSecond,
            endianness: Endianness::native(),
            snaplen: 65535,
            ..PcapHeader::default()
        };
        Ok(FrameWriter {
            inner: PcapWriter::with_header(writer, header)?,
        })
    }

    pub fn write(&mut self, timestamp: Duration, frame: &[u8]) -> Result<(), PcapError> {
        let packet = PcapPacket::new(timestamp, frame.len() as u32, frame);
        self.inner.write_packet(&packet)?;
        Ok(())
    }

    /// Flushes and returns the underlying writer.
    pub fn into_inner(self) -> W {
        self.inner.into_writer()
    }
}

/// Reads Ethernet frames from a pcap file.
pub struct FrameReader<R: Read> {
    inner: PcapReader<R>,
}

impl FrameReader<BufReader<File>> {
    pub fn open(path: impl AsRef<Path>) -> Result<Self, PcapError> {
        let path = path.as_ref();
        let file = File::open(path).map_err(|source| PcapError::Io {
            path: path.display().to_string(),
            source,
        })?;
        FrameReader::new(BufReader::new(file))
    }
}

impl<R: Read> FrameReader<R> {
    pub fn new(reader: R) -> Result<Self, PcapError> {
        let inner = PcapReader::new(reader)?;
        let datalink = inner.header().datalink;
        if datalink != DataLink::ETHERNET {
            return Err(PcapError::LinkType(datalink));
        }
        Ok(FrameReader { inner })
    }
}

impl<R: Read> Iterator for FrameReader<R> {
    type Item = Result<CapturedFrame, PcapError>;
    fn next(&mut self) -> Option<Self::Item> {
        self.inner.next_packet().map(|r| {
            r.map(|p| CapturedFrame {
                timestamp: p.timestamp,
                bytes: p.data.into_owned(),
            })
            .map_err(PcapError::from)
        })
    }
}
