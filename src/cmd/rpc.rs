//! `homa-nic rpc`: a client on one simulated card whose Ethernet port is a
//! UDP wire. Sends requests one at a time to `--to IP:PORT` (an echo server:
//! `homa-nic server`, or any Homa server that echoes), checks every response
//! byte for byte against its request, and prints each RPC's round trip in
//! wall time and in the card's cycles. Exits non-zero on any mismatch, error
//! or timeout. With `--loss` (frames dropped on receive), an RPC that gets
//! no response by `--timeout-s` is counted unfinished and the next one
//! starts: the card does not retransmit yet, so a lost frame loses its RPC;
//! the run then reports completed against unfinished and fails only on a
//! mismatch.
//!
//! The two times mean different things: wall time includes the simulation of
//! both ends (Verilator runs far slower than 250 MHz); cycles are this card's
//! clock from the send to the response, which also ran while the far end
//! was busy simulating itself, so they are an upper bound on the card's own
//! share, not a latency a real card would see.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::Args;
use homa_host::{Endpoint, Peer, MAX_MESSAGE_BYTES};

use super::wire::WireArgs;

#[derive(Args, Debug)]
pub struct RpcArgs {
    #[command(flatten)]
    pub wire: WireArgs,
    /// The server, IP:PORT (its MAC comes from --neighbor).
    #[arg(long)]
    pub to: SocketAddr,
    /// The client's own Homa port.
    #[arg(long, default_value_t = 40_000)]
    pub port: u16,
    /// Message sizes in bytes (1 to 1000000), used in turn.
    #[arg(long, value_delimiter = ',', default_value = "100")]
    pub size: Vec<usize>,
    /// RPCs to run [default: one per size].
    #[arg(long)]
    pub count: Option<usize>,
    /// Wall-clock seconds an RPC may take before the client gives up.
    #[arg(long, default_value_t = 60.0)]
    pub timeout_s: f64,
    /// One JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// One finished RPC.
struct Rpc {
    bytes: usize,
    wall: Duration,
    cycles: u64,
    ok: bool,
}

pub fn run(args: &RpcArgs) -> anyhow::Result<()> {
    if let Some(bad) = args.size.iter().find(|&&s| s == 0 || s > MAX_MESSAGE_BYTES) {
        bail!("--size {bad}: sizes are 1 to {MAX_MESSAGE_BYTES} bytes");
    }
    if !args.timeout_s.is_finite() || args.timeout_s <= 0.0 {
        bail!("--timeout-s must be a positive number of seconds");
    }
    let server_ip = match args.to {
        SocketAddr::V4(a) => *a.ip(),
        SocketAddr::V6(_) => bail!("--to {}: IPv4 only", args.to),
    };
    let server = Peer::new(
        server_ip,
        args.wire.neighbor_mac(server_ip)?,
        args.to.port(),
    );
    let card = args.wire.open("rpc")?;
    let mut endpoint = Endpoint::open(&card.nic, args.port)?;
    let timeout = Duration::from_secs_f64(args.timeout_s);
    let count = args.count.unwrap_or(args.size.len());
    let mut rpcs = Vec::with_capacity(count);
    let mut failure = None;
    let mut unfinished = Vec::new();
    for i in 0..count {
        let bytes = args.size[i % args.size.len()];
        let payload = pattern(i, bytes);
        let (wall, start) = (Instant::now(), card.cycle());
        let id = endpoint
            .send_request(server, &payload)
            .with_context(|| format!("sending RPC {i} ({bytes} bytes)"))?;
        let response = loop {
            match endpoint.try_recv_response(id) {
                Ok(Some(r)) => break Some(r),
                Ok(None) if wall.elapsed() > timeout => break None,
                Ok(None) => card.wait(),
                Err(e) => return Err(e).with_context(|| format!("RPC {i} ({bytes} bytes)")),
            }
        };
        let Some(response) = response else {
            if args.wire.loss > 0.0 {
                if !args.json {
                    println!(
                        "rpc {i}: {bytes} bytes, UNFINISHED: no response in {:.1} s (--loss {}; recovery waits resend_ticks of the card's simulated clock per loss)",
                        args.timeout_s, args.wire.loss
                    );
                }
                unfinished.push(i);
                continue;
            }
            failure = Some(format!(
                "RPC {i} ({bytes} bytes) to {}: no response in {:.1} s (is the server up, \
                 with the mirror image of this --wire, and --neighbor its MAC?)",
                args.to, args.timeout_s
            ));
            break;
        };
        let rpc = Rpc {
            bytes,
            wall: wall.elapsed(),
            cycles: card.cycle() - start,
            ok: *response.message().bytes() == payload[..],
        };
        tracing::info!(
            %id,
            bytes = response.message().len(),
            cycles = rpc.cycles,
            ok = rpc.ok,
            "response received"
        );
        if !rpc.ok {
            tracing::error!(
                "RPC {i}: the response ({} bytes) differs from the request ({bytes} bytes)",
                response.message().len()
            );
        }
        if !args.json {
            println!(
                "rpc {i}: {bytes} bytes, {} wall {:.3} ms, card {} cycles ({:.2} us at 250 MHz)",
                if rpc.ok { "ok" } else { "MISMATCH" },
                rpc.wall.as_secs_f64() * 1e3,
                rpc.cycles,
                rpc.cycles as f64 * card.nic.cycle_ns() / 1e3
            );
        }
        rpcs.push(rpc);
    }
    if failure.is_some() {
        // The card may be stuck mid-message: do not wait for it (dropping
        // the endpoint would); say what its RX path counted instead.
        std::mem::forget(endpoint);
        eprintln!(
            "card RX path: {}",
            serde_json::Value::from(card.rx_path_counters())
        );
    } else {
        // Dropping the endpoint lets the card finish sending.
        drop(endpoint);
    }
    card.finish()?;
    let mismatches = rpcs.iter().filter(|r| !r.ok).count();
    let lost = card.network().udp_stats().map_or(0, |s| s.frames_lost);
    if args.json {
        let list: Vec<_> = rpcs
            .iter()
            .map(|r| {
                serde_json::json!({
                    "bytes": r.bytes,
                    "ok": r.ok,
                    "wall_ms": r.wall.as_secs_f64() * 1e3,
                    "cycles": r.cycles,
                    "cycle_us": r.cycles as f64 * card.nic.cycle_ns() / 1e3,
                })
            })
            .collect();
        println!(
            "{}",
            serde_json::json!({
                "rpcs": rpcs.len(),
                "requested": count,
                "mismatches": mismatches,
                "unfinished": unfinished.len(),
                "frames_lost_on_receive": lost,
                "error": failure,
                "results": list,
                "rx_path": card.rx_path_counters(),
            })
        );
    }
    if args.wire.loss > 0.0 && !args.json {
        println!(
            "completed {} of {count} RPCs, unfinished {} (--loss {}: {lost} frames dropped on receive, each asked for again after resend_ticks of silence)",
            rpcs.len(),
            unfinished.len(),
            args.wire.loss
        );
    }
    if let Some(f) = failure {
        bail!(f);
    }
    if mismatches > 0 {
        bail!("{mismatches} of {count} responses differ from their requests");
    }
    Ok(())
}

/// The bytes of RPC `index`: distinct per RPC and per position, so a response
/// to the wrong request or a misplaced packet shows.
fn pattern(index: usize, bytes: usize) -> Vec<u8> {
    (0..bytes)
        .map(|j| {
            (j as u32)
                .wrapping_mul(31)
                .wrapping_add(index as u32 * 7 + 1) as u8
        })
        .collect()
}
