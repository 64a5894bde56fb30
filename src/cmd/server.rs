//! `homa-nic server`: an echo server on one simulated card whose Ethernet
//! port is a UDP wire. Every request is answered with its own bytes. Runs
//! until killed, or until it has answered `--max-rpcs` requests (then it lets
//! the card finish sending, flushes the capture and exits). SIGINT or SIGTERM
//! stop it at once with the same summary (counters included), so a stalled
//! transfer can be stopped and still explained.
//!
//! The card runs as fast as Verilator allows while frames come and go; once
//! nothing has moved for a while it sleeps until a datagram arrives (see
//! `wire::IDLE_WAIT`), so an idle server does not spin a core.

use std::sync::atomic::{AtomicBool, Ordering};

use clap::Args;
use homa_host::{Endpoint, Error, Request};

use super::wire::WireArgs;

#[derive(Args, Debug)]
pub struct ServerArgs {
    #[command(flatten)]
    pub wire: WireArgs,
    /// The Homa port to serve (HomaModule's servers use 1 to 32767).
    #[arg(long)]
    pub port: u16,
    /// Exit after answering this many requests.
    #[arg(long)]
    pub max_rpcs: Option<u64>,
    /// One JSON object at exit instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Set by SIGINT/SIGTERM: stop serving and print the summary.
static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_stop_signal(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

pub fn run(args: &ServerArgs) -> anyhow::Result<()> {
    // SAFETY: the handler only stores to an atomic.
    unsafe {
        let handler = on_stop_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        libc::signal(libc::SIGINT, handler);
        libc::signal(libc::SIGTERM, handler);
    }
    let card = args.wire.open("server")?;
    let mut endpoint = Endpoint::open(&card.nic, args.port)?;
    tracing::info!(
        wire = ?args.wire.wire,
        mac = %args.wire.mac,
        ip = %args.wire.ip,
        port = args.port,
        "echo server up"
    );
    if !args.json {
        println!(
            "homa-nic server: {} ({}) port {}, wire udp {} -> {}",
            args.wire.ip, args.wire.mac, args.port, args.wire.wire.local, args.wire.wire.remote
        );
    }
    let mut served = 0u64;
    let mut bytes = 0u64;
    while args.max_rpcs.is_none_or(|max| served < max) && !STOP.load(Ordering::Relaxed) {
        match endpoint.try_recv_request()? {
            Some(request) => {
                bytes += request.message().len() as u64;
                echo(&card, &mut endpoint, request)?;
                served += 1;
            }
            None => card.wait(),
        }
    }
    let stopped = STOP.load(Ordering::Relaxed);
    if stopped {
        // Stopped by a signal: the card may be stuck mid-message, so do not
        // wait for it to finish sending (dropping the endpoint would).
        std::mem::forget(endpoint);
    } else {
        // Dropping the endpoint waits for the card to send the last responses.
        drop(endpoint);
    }
    card.finish()?;
    let stats = card.network().udp_stats().cloned().unwrap_or_default();
    let verdicts = card.rx_verdicts()?;
    if args.json {
        println!(
            "{}",
            serde_json::json!({
                "rpcs": served,
                "bytes": bytes,
                "cycles": card.cycle(),
                "frames_sent": stats.frames_sent,
                "frames_received": stats.frames_received,
                "datagrams_dropped": stats.datagrams_dropped,
                "foreign_datagrams": stats.foreign_datagrams,
                "frames_lost": stats.frames_lost,
                "rx_verdicts": verdicts,
                "rx_path": card.rx_path_counters(),
                "stopped_by_signal": stopped,
            })
        );
    } else {
        println!(
            "served {served} RPCs ({bytes} bytes) in {} cycles; frames sent {}, received {}",
            card.cycle(),
            stats.frames_sent,
            stats.frames_received
        );
        if args.wire.loss > 0.0 {
            println!(
                "--loss {}: {} frames dropped on receive (asked for again by RESEND; this card's timers run on its simulated clock)",
                args.wire.loss, stats.frames_lost
            );
        }
        println!(
            "card RX frames by parser verdict: {}",
            serde_json::Value::from(verdicts)
        );
        println!(
            "card RX path: {}",
            serde_json::Value::from(card.rx_path_counters())
        );
    }
    Ok(())
}

/// Replies to `request` with its own bytes, waiting while the TX ring is full.
fn echo(card: &super::wire::Card, endpoint: &mut Endpoint, request: Request) -> anyhow::Result<()> {
    let peer = request.peer();
    tracing::info!(
        id = %request.id(),
        bytes = request.message().len(),
        from = %format!("{}:{}", peer.ip, peer.port),
        mac = %homa_wire::MacAddr(peer.mac),
        cycle = card.cycle(),
        "request received"
    );
    let (id, payload) = (request.id(), request.message().to_vec());
    // The request's bpage goes back to the card before the reply.
    drop(request);
    loop {
        match endpoint.reply(id, &payload) {
            Ok(()) => return Ok(()),
            Err(Error::RingFull { .. }) => card.wait(),
            Err(e) => return Err(e.into()),
        }
    }
}
