//! `homa-nic decode FILE.pcap`: one line per frame, or one JSON object per
//! frame with `--json`. A frame that does not decode is reported with its
//! error and the run goes on.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use homa_wire::pcap::FrameReader;
use homa_wire::{Body, Frame};
use serde_json::json;

#[derive(clap::Args)]
pub struct DecodeArgs {
    /// A libpcap capture of Ethernet frames (microsecond or nanosecond timestamps).
    pub file: PathBuf,
    /// One JSON object per frame, every header field by its WIRE.md name.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &DecodeArgs) -> anyhow::Result<()> {
    let reader = FrameReader::open(&args.file)
        .with_context(|| format!("reading {}", args.file.display()))?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let (mut good, mut bad) = (0u64, 0u64);
    for (index, captured) in reader.enumerate() {
        let captured =
            captured.with_context(|| format!("{}: frame {index}", args.file.display()))?;
        let ts = captured.timestamp;
        let decoded = Frame::decode(&captured.bytes);
        match &decoded {
            Ok(_) => good += 1,
            Err(_) => bad += 1,
        }
        let line = if args.json {
            json_line(index, ts.as_nanos(), captured.bytes.len(), &decoded)?
        } else {
            let time = format!("{}.{:09}", ts.as_secs(), ts.subsec_nanos());
            match &decoded {
                Ok(frame) => format!("{time} {frame}, length {}", captured.bytes.len()),
                Err(e) => format!("{time} [undecodable, {} bytes] {e}", captured.bytes.len()),
            }
        };
        if writeln!(out, "{line}").is_err() {
            return Ok(()); // stdout closed (e.g. piped into head): stop quietly
        }
    }
    out.flush().ok();
    tracing::info!(decoded = good, undecodable = bad, "done");
    Ok(())
}

fn json_line(
    index: usize,
    time_ns: u128,
    length: usize,
    decoded: &Result<Frame, homa_wire::DecodeError>,
) -> anyhow::Result<String> {
    let value = match decoded {
        Ok(frame) => {
            let mut v = json!({ "index": index, "time_ns": time_ns, "length": length });
            let mut fields = serde_json::to_value(frame)?;
            // Fields the codec derives rather than stores.
            match &frame.homa.body {
                Body::Data(d) => {
                    fields["homa"]["body"]["payload_length"] = json!(d.payload.len());
                    fields["homa"]["body"]["payload_offset"] =
                        json!(d.payload_offset(&frame.homa.common));
                }
                Body::Ack(a) => fields["homa"]["body"]["num_acks"] = json!(a.acks.len()),
                _ => {}
            }
            fields["homa"]["common"]["type"] = json!(frame.homa.packet_type() as u8);
            v.as_object_mut()
                .unwrap()
                .extend(fields.as_object().unwrap().clone());
            v
        }
        Err(e) => json!({
            "index": index, "time_ns": time_ns, "length": length,
            "error": e.to_string(), "error_kind": e.kind(),
        }),
    };
    Ok(serde_json::to_string(&value)?)
}
