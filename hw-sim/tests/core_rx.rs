//! The core's RX port: every frame is counted once, by verdict, in the RX
//! counters block the driver reads over CSR.

mod support;

use homa_hw::regmap::rx_counters;
use homa_hw::rx::parser::RxVerdict;
use homa_hw_sim::axis::frame_to_beats;
use homa_hw_sim::{HomaCore, Sim};
use homa_wire::layout::{self, HOMA_OFFSET};
use homa_wire::{
    Body, CommonHeader, EthernetHeader, Frame, Grant, HomaPacket, Ipv4Header, MacAddr, PacketType,
};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use support::{expected_verdict, fix_ip_checksum, random_wire_frame};

fn core(name: &str) -> Sim<HomaCore> {
    let mut sim: Sim<HomaCore> = Sim::traced_on_failure(name);
    sim.reset(4);
    sim
}

fn receive(sim: &mut Sim<HomaCore>, frame: &[u8]) {
    for beat in frame_to_beats(frame, 0) {
        sim.set_s_axis_rx_tdata(&beat.words());
        sim.set_s_axis_rx_tkeep(beat.keep);
        sim.set_s_axis_rx_tlast(beat.last);
        sim.set_s_axis_rx_tvalid(true);
        sim.tick();
    }
    sim.set_s_axis_rx_tvalid(false);
}

fn counters(sim: &mut Sim<HomaCore>) -> Vec<u32> {
    RxVerdict::ALL
        .iter()
        .map(|&v| {
            sim.csr_read(rx_counters::BASE + rx_counters::FIRST_COUNTER + 4 * v as u32)
                .unwrap()
        })
        .collect()
}

#[test]
fn every_frame_is_counted_once_by_verdict() {
    let mut sim = core("core_rx_counters");
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut want = vec![0u32; RxVerdict::ALL.len()];
    for _ in 0..400 {
        let frame = random_wire_frame(&mut rng);
        if frame.is_empty() {
            continue;
        }
        want[expected_verdict(&frame) as usize] += 1;
        receive(&mut sim, &frame);
    }
    for _ in 0..4 {
        sim.tick();
    }
    assert_eq!(counters(&mut sim), want);
}

#[test]
fn a_frame_too_short_for_its_type_is_dropped_and_counted() {
    let mut sim = core("core_rx_short_grant");
    let grant = Frame {
        eth: EthernetHeader {
            dst: MacAddr([2, 0, 0, 0, 0, 2]),
            src: MacAddr([2, 0, 0, 0, 0, 1]),
        },
        ip: Ipv4Header::homa([10, 0, 0, 1].into(), [10, 0, 0, 2].into(), 7),
        homa: HomaPacket {
            common: CommonHeader::new(0x8000, 99, 2, PacketType::Grant),
            body: Body::Grant(Grant {
                offset: 10_000,
                priority: 2,
            }),
        },
    };
    let good = grant.encode().unwrap();
    // The same GRANT with its last byte (priority) cut off, IP length to match.
    let mut short = good[..good.len() - 1].to_vec();
    let ip_total_length = (short.len() - 14) as u64;
    layout::put(
        &mut short[14..],
        layout::ipv4::TOTAL_LENGTH,
        ip_total_length,
    );
    fix_ip_checksum(&mut short);
    assert_eq!(short.len(), HOMA_OFFSET + 32);

    receive(&mut sim, &good);
    receive(&mut sim, &short);
    receive(&mut sim, &good);
    for _ in 0..4 {
        sim.tick();
    }
    let c = counters(&mut sim);
    assert_eq!(c[RxVerdict::Accept as usize], 2, "{c:?}");
    assert_eq!(c[RxVerdict::HomaTruncated as usize], 1, "{c:?}");
    assert_eq!(c.iter().sum::<u32>(), 3, "{c:?}");
    // Reset clears them.
    sim.reset(2);
    assert!(counters(&mut sim).iter().all(|&n| n == 0));
}
