//! The kernel-Homa VM test: Linux with HomaModule in a QEMU guest and the
//! simulated card (`homa-nic`, release build) on one UDP wire
//! (docs/udp-wire.md), RPCs up to HomaModule's largest message both ways.
//!
//! 1. The card is an echo server (`homa-nic server`); the guest's client
//!    (`homa-vm-guest client`) sends it requests of 100 B to 1,000,000 B and
//!    checks every echoed byte. Requests past the 40,000 unscheduled bytes
//!    need the card's GRANTs; responses past them need HomaModule's.
//! 2. The guest is the echo server (`homa-vm-guest server`) and the card the
//!    client (`homa-nic rpc`, which checks every response byte).
//! 3. Both of the card's captures are replayed as HomaModule's rules say: the
//!    card sent GRANTs, no DATA it sent went past what the guest granted (or
//!    the unscheduled bytes), and its grants never had more than max_incoming
//!    bytes granted and not received.
//! 4. All of it again with the card dropping 10% of the frames it receives
//!    (`--loss`; HOMA_VM_LOSS=fraction sets another share, 0 skips this
//!    part): the guest's requests and responses lose datagrams and the
//!    card's RESENDs recover them; the card acks every response it completes
//!    and the guest's server waits until HomaModule has freed every one
//!    (`homa-vm-guest server` fails if any is still held 120 s on). The
//!    card's timers tick from wall time here (`--wall-tick-us`,
//!    CARD_WALL_TICK_US). Measured 5 December 2026 (three runs at 0.1, one at
//!    0.05 and three at 0.02, all passed): at 0.1 the card's client took
//!    7.8-9.6 s for its four RPCs and the guest's server had every response
//!    acked and freed 6.9-8.7 s after handing over the last (0.2 s clean);
//!    the guest's 1 MB request and response each went out three to four
//!    times over, because the card records at most four gaps per message
//!    and drops a packet that would open a fifth, so it asks for long ranges.
//!
//! Needs qemu-system-x86_64, busybox-static, `target/homa-vm` from
//! `testbench/vm/fetch-homa.sh` (the guest kernel and homa.ko) and the release
//! `homa-nic`; where one is missing it says which and skips. It is opt-in
//! (HOMA_VM_TEST=1): `make homa-vm-test` provides all that and runs it, `make
//! test` skips it. HOMA_VM_DIR and HOMA_NIC_BIN override where the kernel
//! and the card's binary are looked for.
//!
//! DESIGN NOTES
//! ------------
//! QEMU runs under TCG: this machine's /dev/kvm exists but fails the guest's
//! first instructions ("emulation failure"), so KVM is not tried. The card
//! is the release binary because the debug build simulates several times
//! slower (docs/udp-wire.md) and a megabyte is ~700 packets each way. The
//! guest's HomaModule is told to wait far longer than its defaults before
//! RESEND and abort (a simulated card takes milliseconds per packet);
//! otherwise it
//! runs with its defaults, so it sends a grant's worth of DATA in one burst.
//! The UDP wire model hands such a burst to the card at 100 Gb/s in the
//! card's time, as a real link would (hw-sim's network.rs).
//!
//! The guest waits for its link's carrier before the first RPC: a request
//! sent earlier is lost, and without the card's RESEND/RPC_UNKNOWN nothing
//! would recover it (observed: the first 100-byte RPC timed out).
//!
//! The captures and the initramfs stay in target/homa-vm-run after a run.

use std::collections::BTreeMap;
use std::io::Write;
use std::net::{Ipv4Addr, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use homa_testbench::vm::{self, VmSession};
use homa_wire::pcap::FrameReader;
use homa_wire::{Body, Frame};

const CARD_MAC: &str = "02:00:00:00:00:02";
const CARD_IP: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);
const GUEST_MAC: &str = "52:54:00:12:34:56";
const GUEST_IP: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
const HOMA_PORT: u16 = 99;
/// Request sizes, both directions: one packet, the unscheduled bytes
/// exactly, a few grants' worth, HomaModule's largest.
const SIZES: &[usize] = &[100, 40_000, 100_000, 1_000_000];
/// HomaModule's defaults (design/WIRE.md), which the card's CSRs reset to.
const UNSCHED_BYTES: u32 = 40_000;
const MAX_INCOMING: u64 = 400_000;
/// The link speed the guest's HomaModule paces its DATA to (sysctl
/// link_mbps): its default, unless HOMA_VM_LINK_MBPS says otherwise.
const LINK_MBPS: u32 = 25_000;
/// The share of the frames it receives the card drops in the lossy exchange
/// (HOMA_VM_LOSS overrides; 0 skips it): the 10% of issue 9's loss tests.
const LOSS: f64 = 0.1;
/// Boot, both directions and shutdown; a run takes about a minute or two.
const TIMEOUT: Duration = Duration::from_secs(600);
/// The card's timer tick in the lossy exchange, in wall-time microseconds
/// (`--wall-tick-us`): 20 ms, so it asks again after 100 ms of the guest's
/// silence, as the guest's HomaModule is told to (below), and gives up after
/// 4 s (the guest after 30 s). The card's own prescaler would count its
/// simulated time, which runs thousands of times slower than the guest's.
const CARD_WALL_TICK_US: &str = "20000";

fn homa_vm_dir() -> PathBuf {
    std::env::var_os("HOMA_VM_DIR").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/homa-vm"),
        PathBuf::from,
    )
}

fn card_binary() -> PathBuf {
    std::env::var_os("HOMA_NIC_BIN").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/release/homa-nic"),
        PathBuf::from,
    )
}

/// The guest's /init: network, HomaModule tuned for a slow peer, then the
/// client against the card's server, then the server for the card's client.
fn init_script(dir_sizes: &str, count: usize, link_mbps: u32) -> String {
    format!(
        r#"#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
insmod /lib/modules/e1000.ko || echo "HOMA-VM init: insmod e1000 failed"
insmod /lib/modules/homa.ko || echo "HOMA-VM init: insmod homa failed"
ip link set dev eth0 up
ip addr add {GUEST_IP}/24 dev eth0
# A frame sent before e1000's link is up is lost (recovered only a RESEND
# round later): wait for carrier, then resolve the card's MAC by ARP (its
# hardware responder answers).
n=0; until [ "$(cat /sys/class/net/eth0/carrier 2>/dev/null)" = 1 ] || [ $n -ge 100 ]; do sleep 0.1; n=$((n+1)); done
arping -c 1 -w 30 -I eth0 {CARD_IP} | grep -i "reply\|received" | head -2
# A simulated card answers in milliseconds: RESEND after 100 ms of silence
# instead of 5, abort after 30 s instead of 0.1.
echo 100 > /proc/sys/net/homa/resend_ticks
echo 100 > /proc/sys/net/homa/resend_interval
echo 30000 > /proc/sys/net/homa/timeout_ticks
# A TCG guest is a slow receiver: QEMU stops reading its socket while the e1000's
# ring is full, and the host then drops datagrams (observed: 29 of the card's
# 1 MB response, RcvbufErrors), each a RESEND round to recover. Grants are the
# receiver's flow control: a 40 KB window (default 0, dynamic: 200 KB and more
# here) keeps what the card may send ahead within QEMU's socket buffer.
echo 40000 > /proc/sys/net/homa/window
# Its pacer's idea of the link: see LINK_MBPS.
echo {link_mbps} > /proc/sys/net/homa/link_mbps
echo "HOMA-VM init: network and homa up at $(cut -d' ' -f1 /proc/uptime) s"
/bin/homa-vm-guest client --to {CARD_IP}:{HOMA_PORT} --size {dir_sizes}
/bin/homa-vm-guest server --port {HOMA_PORT} --count {count}
echo "HOMA-VM init: guest kernel log:"
dmesg | grep -iv "^.\{{0,20\}}\(pci\|acpi\|e820\|clocksource\)" | grep -i "homa\|e1000\|warn\|bug\|error" | tail -20
poweroff -f
"#
    )
}

/// Two free UDP ports on the loopback (the card's end, the VM's end).
fn free_ports() -> (u16, u16) {
    let a = UdpSocket::bind("127.0.0.1:0").unwrap();
    let b = UdpSocket::bind("127.0.0.1:0").unwrap();
    (
        a.local_addr().unwrap().port(),
        b.local_addr().unwrap().port(),
    )
}

/// A child process's exit and output, waited for at most `timeout`.
fn wait_output(mut child: Child, timeout: Duration, what: &str) -> (bool, String) {
    let deadline = Instant::now() + timeout;
    loop {
        match child.try_wait().unwrap() {
            Some(_) => break,
            None if Instant::now() > deadline => {
                let _ = child.kill();
                let out = child.wait_with_output().unwrap();
                return (
                    false,
                    format!(
                        "{what} still running after {} s, killed\n{}{}",
                        timeout.as_secs(),
                        String::from_utf8_lossy(&out.stdout),
                        String::from_utf8_lossy(&out.stderr)
                    ),
                );
            }
            None => std::thread::sleep(Duration::from_millis(100)),
        }
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// What one of the card's captures shows, replayed as HomaModule's rules say.
#[derive(Debug, Default)]
struct CaptureCheck {
    /// Frames by direction and type, e.g. "card DATA" => 712.
    counts: BTreeMap<String, u64>,
    /// GRANTs the card sent, and the highest offset among them.
    card_grants: u64,
    card_grant_max: u32,
    /// GRANTs the guest sent.
    guest_grants: u64,
    /// The longest frame each way.
    card_max_frame: usize,
    guest_max_frame: usize,
    /// Every rule broken, with the frame's index.
    violations: Vec<String>,
}

impl CaptureCheck {
    fn read(path: &Path) -> CaptureCheck {
        // Per message, keyed by its sender's RPC id: length, highest grant
        // (as sent by the receiver; the capture is at the card, so a GRANT
        // from the guest is listed when the card has it), bytes received.
        #[derive(Default)]
        struct Msg {
            len: u32,
            granted: u32,
            received: BTreeMap<u32, u32>,
        }
        let mut to_card: BTreeMap<u64, Msg> = BTreeMap::new();
        let mut from_card: BTreeMap<u64, Msg> = BTreeMap::new();
        let mut c = CaptureCheck::default();
        let reader = FrameReader::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for (index, captured) in reader.enumerate() {
            let bytes = captured.unwrap().bytes;
            let Ok(frame) = Frame::decode(&bytes) else {
                continue; // ARP, IPv6 neighbour discovery: not Homa
            };
            let by_card = frame.ip.src == CARD_IP;
            let who = if by_card { "card" } else { "guest" };
            *c.counts
                .entry(format!("{who} {}", frame.homa.packet_type().name()))
                .or_default() += 1;
            if by_card {
                c.card_max_frame = c.card_max_frame.max(bytes.len());
            } else {
                c.guest_max_frame = c.guest_max_frame.max(bytes.len());
            }
            let id = frame.homa.common.sender_id;
            match (&frame.homa.body, by_card) {
                (Body::Data(d), true) => {
                    let m = from_card.entry(id).or_default();
                    m.len = d.message_length;
                    let start = d.payload_offset(&frame.homa.common);
                    let end = start + d.payload.len() as u32;
                    let allowed = m.granted.max(UNSCHED_BYTES.min(d.message_length));
                    if end > allowed {
                        c.violations.push(format!(
                            "frame {index}: the card's DATA of RPC {id} ends at {end}, past its grant {allowed}"
                        ));
                    }
                }
                (Body::Data(d), false) => {
                    let m = to_card.entry(id).or_default();
                    m.len = d.message_length;
                    let start = d.payload_offset(&frame.homa.common);
                    m.received.insert(start, start + d.payload.len() as u32);
                }
                (Body::Grant(g), false) => {
                    c.guest_grants += 1;
                    // A GRANT names the message by its receiver's id.
                    let m = from_card.entry(id ^ 1).or_default();
                    m.granted = m.granted.max(g.offset);
                }
                (Body::Resend(r), false) => {
                    // HomaModule's receiver asks only for granted bytes, and
                    // its sender takes a RESEND past its grant as the grant
                    // it lost (homa_resend_pkt): so may the card. Length -1
                    // (all sent so far) grants nothing.
                    let m = from_card.entry(id ^ 1).or_default();
                    if r.length != u32::MAX {
                        m.granted = m.granted.max(r.offset.saturating_add(r.length));
                    }
                }
                (Body::Grant(g), true) => {
                    c.card_grants += 1;
                    c.card_grant_max = c.card_grant_max.max(g.offset);
                    let m = to_card.entry(id ^ 1).or_default();
                    if m.len != 0 && g.offset > m.len {
                        c.violations.push(format!(
                            "frame {index}: the card granted RPC {id} to {}, past its length {}",
                            g.offset, m.len
                        ));
                    }
                    m.granted = m.granted.max(g.offset);
                    let outstanding: u64 = to_card
                        .values()
                        .map(|m| {
                            let granted = m.granted.max(UNSCHED_BYTES.min(m.len)).min(m.len);
                            let got: u32 = m.received.iter().map(|(s, e)| e - s).sum();
                            granted.saturating_sub(got) as u64
                        })
                        .sum();
                    if outstanding > MAX_INCOMING {
                        c.violations.push(format!(
                            "frame {index}: with this GRANT the card has {outstanding} bytes granted and not received (max_incoming {MAX_INCOMING})"
                        ));
                    }
                }
                _ => {}
            }
        }
        c
    }

    fn summary(&self) -> String {
        let counts: Vec<String> = self
            .counts
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        format!(
            "{}; card GRANTs {} (highest offset {}), guest GRANTs {}; longest frame card {} B, guest {} B; {} violations",
            counts.join(", "),
            self.card_grants,
            self.card_grant_max,
            self.guest_grants,
            self.card_max_frame,
            self.guest_max_frame,
            self.violations.len()
        )
    }
}

fn skip(why: &str) {
    // Straight to the fd, past libtest's capture, so `make test` shows the skip.
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED the kernel-Homa VM test: {why}. `make homa-vm-test` fetches and builds what it needs and runs it"
    );
}

fn note(line: &str) {
    let _ = writeln!(std::io::stderr(), "homa-vm: {line}");
}

#[test]
fn kernel_homa_in_a_vm_and_the_card_exchange_megabyte_rpcs_with_grants() {
    if std::env::var("HOMA_VM_TEST").as_deref() != Ok("1") {
        return skip("it is opt-in (about 40 s itself, but it needs the release card, a release build of the workspace, and 120 MB of Debian packages: too much for `make test`): HOMA_VM_TEST=1 runs it");
    }
    let Some(qemu) = vm::find_qemu() else {
        return skip("qemu-system-x86_64 is not installed");
    };
    let Some(busybox) = vm::find_busybox() else {
        return skip("busybox (busybox-static) is not installed");
    };
    let dir = homa_vm_dir();
    for needed in ["vmlinuz", "homa.ko", "modules/e1000.ko"] {
        if !dir.join(needed).is_file() {
            return skip(&format!(
                "{} is missing: testbench/vm/fetch-homa.sh makes it (Debian's 6.12 kernel from bookworm-backports, HomaModule built against it)",
                dir.join(needed).display()
            ));
        }
    }
    let card = card_binary();
    if !card.is_file() {
        return skip(&format!(
            "{} is missing: the card is simulated by the release build (`cargo build --release`)",
            card.display()
        ));
    }
    let link_mbps: u32 = std::env::var("HOMA_VM_LINK_MBPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(LINK_MBPS);
    note(&format!("guest's HomaModule link_mbps {link_mbps}"));
    let setup = Setup {
        qemu,
        busybox,
        dir,
        card,
        link_mbps,
    };
    // Clean, then with the card dropping a share of what it receives: the
    // guest's DATA to the card's server and its responses to the card's
    // client lose datagrams, which the card's RESENDs recover, and the card
    // acks every response it completes so HomaModule's server frees it.
    exchange(&setup, "clean", 0.0, None);
    let loss = std::env::var("HOMA_VM_LOSS")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(LOSS);
    if loss <= 0.0 {
        return;
    }
    let lossy = exchange(&setup, "lossy", loss, Some(CARD_WALL_TICK_US));
    for (what, c) in [("card as server", &lossy.0), ("card as client", &lossy.1)] {
        assert!(
            c.counts.get("card RESEND").copied().unwrap_or(0) > 0,
            "{what}: with --loss {loss} the card sent no RESEND: {}",
            c.summary()
        );
    }
    let acks = lossy.1.counts.get("card ACK").copied().unwrap_or(0);
    assert!(
        acks >= SIZES.len() as u64,
        "the card acked {acks} of the guest's {} responses: {}",
        SIZES.len(),
        lossy.1.summary()
    );
}

/// What the test runs with, found once.
struct Setup {
    qemu: PathBuf,
    busybox: PathBuf,
    dir: PathBuf,
    card: PathBuf,
    link_mbps: u32,
}

/// One boot of the guest: its client against the card's server, then the
/// card's client against its server, the card dropping `loss` of the frames
/// it receives (its timers ticking every `wall_tick_us` of wall time if
/// given); every RPC must complete intact and both captures obey
/// HomaModule's rules. Returns the captures' checks (card as server, card as
/// client).
fn exchange(
    setup: &Setup,
    label: &str,
    loss: f64,
    wall_tick_us: Option<&str>,
) -> (CaptureCheck, CaptureCheck) {
    let mut card_timers = vec!["--loss".to_string(), loss.to_string()];
    if let Some(us) = wall_tick_us {
        card_timers.extend(["--wall-tick-us".to_string(), us.to_string()]);
    }
    let Setup {
        qemu,
        busybox,
        dir,
        card,
        link_mbps,
    } = setup;
    let (qemu, busybox, dir, card, link_mbps) = (qemu, busybox, dir, card, *link_mbps);
    note(&format!(
        "{label}: the card drops {loss} of the frames it receives"
    ));

    let started = Instant::now();
    let sizes: Vec<String> = SIZES.iter().map(|s| s.to_string()).collect();
    let sizes = sizes.join(",");
    // Kept after the run (the captures explain a failure): target/homa-vm-run.
    let work_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../target/homa-vm-run")
        .join(label);
    let _ = std::fs::remove_dir_all(&work_dir);
    std::fs::create_dir_all(&work_dir).unwrap();
    let work_dir = work_dir.canonicalize().unwrap();
    let initramfs = vm::build_custom_initramfs(
        &busybox,
        &[dir.join("modules/e1000.ko"), dir.join("homa.ko")],
        &[PathBuf::from(env!("CARGO_BIN_EXE_homa-vm-guest"))],
        &init_script(&sizes, SIZES.len(), link_mbps),
    )
    .expect("initramfs");
    let initrd = work_dir.join("initramfs.cpio");
    std::fs::write(&initrd, &initramfs).unwrap();

    let (card_port, vm_port) = free_ports();
    let card_wire = format!("udp:127.0.0.1:{card_port}:127.0.0.1:{vm_port}");
    let server_pcap = work_dir.join("card-server.pcap");
    let client_pcap = work_dir.join("card-client.pcap");

    // 1. The card serves; the guest's client sends.
    let server = Command::new(&card)
        .args(["server", "--wire", &card_wire, "--mac", CARD_MAC])
        .args([
            "--ip",
            &CARD_IP.to_string(),
            "--port",
            &HOMA_PORT.to_string(),
        ])
        .args(["--max-rpcs", &SIZES.len().to_string(), "--json", "--pcap"])
        .arg(&server_pcap)
        .args(&card_timers)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("homa-nic server");
    let netdev = format!(
        "dgram,id=n0,local.type=inet,local.host=127.0.0.1,local.port={vm_port},remote.type=inet,remote.host=127.0.0.1,remote.port={card_port}"
    );
    let args: Vec<String> = [
        "-accel",
        "tcg",
        "-m",
        "1G",
        "-smp",
        "1",
        "-netdev",
        &netdev,
        "-device",
        &format!("e1000,netdev=n0,mac={GUEST_MAC}"),
        "-kernel",
        &dir.join("vmlinuz").to_string_lossy(),
        "-initrd",
        &initrd.to_string_lossy(),
        "-append",
        "console=ttyS0 panic=-1 quiet",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut guest = VmSession::spawn(&qemu, &args).expect("qemu");
    let fail = |guest: &mut VmSession, why: String| -> ! {
        panic!(
            "{why}\nguest console:\n{}\n(the card's captures: {})",
            guest.console(),
            work_dir.display()
        );
    };
    let verdict = guest
        .wait_for(
            |l| l.starts_with("HOMA-VM CLIENT PASS") || l.contains("FAIL"),
            TIMEOUT,
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let client_done = guest.elapsed();
    if !verdict.starts_with("HOMA-VM CLIENT PASS") {
        // Stop the card's server: its summary says what its RX path counted.
        // SAFETY: a signal to our own child.
        unsafe { libc::kill(server.id() as i32, libc::SIGTERM) };
    }
    let (server_ok, server_out) = wait_output(server, Duration::from_secs(60), "homa-nic server");
    if !verdict.starts_with("HOMA-VM CLIENT PASS") {
        fail(
            &mut guest,
            format!("guest client: {verdict}\ncard server:\n{server_out}"),
        );
    }
    assert!(server_ok, "homa-nic server:\n{server_out}");

    // 2. The guest serves; the card's client sends.
    guest
        .wait_for(
            |l| l.starts_with("HOMA-VM SERVER READY") || l.contains("FAIL"),
            TIMEOUT,
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let rpc_start = Instant::now();
    let client = Command::new(&card)
        .args(["rpc", "--wire", &card_wire, "--mac", CARD_MAC])
        .args(["--ip", &CARD_IP.to_string()])
        .args(["--neighbor", &format!("{GUEST_IP}={GUEST_MAC}")])
        .args(["--to", &format!("{GUEST_IP}:{HOMA_PORT}"), "--size", &sizes])
        .args(["--timeout-s", "300", "--json", "--pcap"])
        .arg(&client_pcap)
        .args(&card_timers)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("homa-nic rpc");
    let (client_ok, client_out) = wait_output(client, TIMEOUT, "homa-nic rpc");
    let rpc_wall = rpc_start.elapsed();
    if !client_ok {
        fail(
            &mut guest,
            format!("homa-nic rpc to the guest's server failed:\n{client_out}"),
        );
    }
    let verdict = guest
        .wait_for(
            |l| l.starts_with("HOMA-VM SERVER PASS") || l.contains("FAIL"),
            TIMEOUT,
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let run = guest
        .finish(Duration::from_secs(60))
        .unwrap_or_else(|e| panic!("{e}"));
    println!(
        "guest console:\n{}\ncard server:\n{server_out}\ncard client:\n{client_out}",
        run.console
    );
    assert!(
        verdict.starts_with("HOMA-VM SERVER PASS"),
        "guest server: {verdict}\nconsole:\n{}",
        run.console
    );

    // 3. The captures.
    for line in run.console.lines().filter(|l| l.starts_with("HOMA-VM")) {
        note(line);
    }
    let as_server = CaptureCheck::read(&server_pcap);
    let as_client = CaptureCheck::read(&client_pcap);
    note(&format!("{label}: card as server: {}", as_server.summary()));
    note(&format!("{label}: card as client: {}", as_client.summary()));
    note(&format!(
        "{label}: guest client done {:.1} s after QEMU started; card client's {} RPCs {:.1} s; whole test {:.1} s",
        client_done.as_secs_f64(),
        SIZES.len(),
        rpc_wall.as_secs_f64(),
        started.elapsed().as_secs_f64()
    ));
    for (what, c) in [
        ("card as server", &as_server),
        ("card as client", &as_client),
    ] {
        assert!(
            c.violations.is_empty(),
            "{what}: {}\n{}",
            c.violations.join("\n"),
            c.summary()
        );
        // The megabyte message to the card needed its GRANTs, and the one
        // from it HomaModule's.
        assert!(
            c.card_grants > 0,
            "{what}: the card sent no GRANT: {}",
            c.summary()
        );
        assert!(
            c.card_grant_max as usize >= 1_000_000,
            "{what}: the card never granted a whole megabyte: {}",
            c.summary()
        );
        assert!(
            c.guest_grants > 0,
            "{what}: the guest sent no GRANT: {}",
            c.summary()
        );
    }
    (as_server, as_client)
}
