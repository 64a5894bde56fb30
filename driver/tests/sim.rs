//! The sim backend: CSR access checks, clocking, and its (temporary) DMA memory.

use homa_driver::{Backend, DmaError, Error, SimBackend};
use homa_hw::regmap;

#[test]
fn csr_accesses_outside_the_window_or_misaligned_are_refused() {
    let sim = SimBackend::traced_on_failure("sim_csr_checks");
    let window = sim.csr_window_bytes();
    assert_eq!(window, 1 << regmap::CSR_ADDR_BITS);
    assert!(matches!(
        sim.csr_read(window as u32),
        Err(Error::CsrOutOfRange { offset, .. }) if u64::from(offset) == window
    ));
    assert!(matches!(
        sim.csr_write(regmap::scratch::BASE + 2, 1),
        Err(Error::CsrMisaligned { .. })
    ));
    assert_eq!(sim.csr_read(0).unwrap(), regmap::block_type::ID);
}

#[test]
fn csr_accesses_take_simulated_cycles_and_advance_ticks() {
    let sim = SimBackend::traced_on_failure("sim_cycles");
    let start = sim.cycle();
    sim.csr_read(0).unwrap();
    let after_read = sim.cycle();
    assert!(after_read > start, "a read takes cycles");
    sim.advance(10);
    assert_eq!(sim.cycle(), after_read + 10);
}

#[test]
fn dma_buffers_are_zeroed_page_rounded_and_at_distinct_iovas() {
    let sim = SimBackend::traced_on_failure("sim_dma_alloc");
    let a = sim.dma_alloc(100).unwrap();
    let b = sim.dma_alloc(5000).unwrap();
    assert_eq!(a.len(), 4096);
    assert_eq!(b.len(), 8192);
    assert_ne!(a.iova(), 0, "IOVA 0 is never handed out");
    assert_eq!(a.iova() % 4096, 0);
    assert_eq!(b.iova() % 4096, 0);
    let disjoint = a.iova() + a.len() as u64 <= b.iova() || b.iova() + b.len() as u64 <= a.iova();
    assert!(disjoint, "{a:?} and {b:?} overlap");
    let mut bytes = vec![0xffu8; b.len()];
    b.read(0, &mut bytes);
    assert!(bytes.iter().all(|x| *x == 0), "zeroed");
}

#[test]
fn dma_words_are_little_endian_and_round_trip() {
    let sim = SimBackend::traced_on_failure("sim_dma_words");
    let mut buf = sim.dma_alloc(64).unwrap();
    buf.write_u32(8, 0x1122_3344);
    buf.write_u64(16, 0x0102_0304_0506_0708);
    assert_eq!(buf.read_u32(8), 0x1122_3344);
    assert_eq!(buf.read_u64(16), 0x0102_0304_0506_0708);
    let mut bytes = [0u8; 4];
    buf.read(8, &mut bytes);
    assert_eq!(bytes, [0x44, 0x33, 0x22, 0x11]);
    buf.write(32, b"homa");
    let mut back = [0u8; 4];
    buf.read(32, &mut back);
    assert_eq!(&back, b"homa");
    assert_eq!(buf.iova_at(32), buf.iova() + 32);
}

#[test]
fn the_card_sees_what_the_host_wrote_at_the_iova() {
    let sim = SimBackend::traced_on_failure("sim_dma_card_view");
    let mut buf = sim.dma_alloc(256).unwrap();
    buf.write_u32(0x40, 0xcafe_f00d);
    let mut seen = [0u8; 4];
    sim.dma_read(buf.iova_at(0x40), &mut seen).unwrap();
    assert_eq!(u32::from_le_bytes(seen), 0xcafe_f00d);
    // And the host sees what the card writes.
    sim.dma_write(buf.iova_at(0x80), &0x0bad_cafe_u32.to_le_bytes())
        .unwrap();
    assert_eq!(buf.read_u32(0x80), 0x0bad_cafe);
}

#[test]
fn a_freed_buffer_is_gone_from_the_cards_view() {
    let sim = SimBackend::traced_on_failure("sim_dma_free");
    let buf = sim.dma_alloc(64).unwrap();
    let iova = buf.iova();
    assert!(sim.dma_read(iova, &mut [0u8; 64]).is_ok());
    assert!(
        sim.dma_read(iova + buf.len() as u64 - 1, &mut [0u8; 2])
            .is_err(),
        "a range past the end is not the buffer's"
    );
    buf.free().unwrap();
    assert!(matches!(
        sim.dma_read(iova, &mut [0u8; 1]),
        Err(Error::Dma(DmaError::Unmapped { .. }))
    ));
    assert!(sim.dma_write(iova, &[1]).is_err());
    let dropped = sim.dma_alloc(64).unwrap();
    let dropped_iova = dropped.iova();
    drop(dropped);
    assert!(sim.dma_read(dropped_iova, &mut [0u8; 1]).is_err());
    assert_ne!(dropped_iova, iova, "IOVAs are not reused");
}

#[test]
fn a_zero_byte_buffer_is_refused() {
    let sim = SimBackend::traced_on_failure("sim_dma_zero");
    assert!(matches!(
        sim.dma_alloc(0),
        Err(Error::Dma(DmaError::ZeroLength))
    ));
}

/// The message of the panic `f` raises.
fn panic_message(f: impl FnOnce()) -> String {
    let payload =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).expect_err("expected a panic");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

// The two tests below catch the panic rather than `#[should_panic]`, so the
// card is not dropped while panicking (which would keep its waveform).

#[test]
fn an_access_past_the_end_panics() {
    let sim = SimBackend::traced_on_failure("sim_dma_past_end");
    let buf = sim.dma_alloc(10).unwrap();
    let message = panic_message(|| buf.read(4092, &mut [0u8; 8]));
    assert!(
        message.contains("past the end of a 4096-byte DMA buffer"),
        "{message}"
    );
}

#[test]
fn a_misaligned_word_panics() {
    let sim = SimBackend::traced_on_failure("sim_dma_misaligned");
    let buf = sim.dma_alloc(10).unwrap();
    let message = panic_message(|| {
        buf.read_u32(2);
    });
    assert!(message.contains("not 4-byte aligned"), "{message}");
}

#[test]
fn dma_buffers_live_in_the_cards_host_memory_as_iommu_regions() {
    let sim = SimBackend::traced_on_failure("sim_dma_regions");
    let buf = sim.dma_alloc(100).unwrap();
    assert!(
        buf.host_ptr().is_none(),
        "simulated memory has no host pointer"
    );
    let region = sim.with_card(|card| {
        card.memory()
            .regions()
            .map(|r| (r.iova, r.len))
            .collect::<Vec<_>>()
    });
    assert_eq!(region, [(buf.iova(), buf.len() as u64)]);
    let iova = buf.iova();
    drop(buf);
    let left = sim.with_card(|card| card.memory().regions().count());
    assert_eq!(left, 0, "dropping the buffer unmapped {iova:#x}");
}
