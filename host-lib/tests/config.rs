//! homa.conf: every bad form of file is refused with its key, line and
//! allowed values; a good one reaches the card and reads back; a value the
//! card refuses leaves the card as it was.

use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};

use homa_driver::SimBackend;
use homa_host::config::{self, Problem, Reading};
use homa_host::tunables::{EndpointSetting, Shape, Target, Tunable, TUNABLES};
use homa_host::{ConfigError, Endpoint, Error, HomaConf, Nic, Peer, SimNetwork};
use homa_hw::regmap::{block_type, scratch};

/// The one problem of `source`, which must be refused.
fn problem(source: &str) -> Problem {
    let e = HomaConf::parse(source, "test.conf").expect_err("must be refused");
    assert_eq!(e.problems.len(), 1, "{e}");
    e.problems[0].clone()
}

#[test]
fn the_example_file_is_the_defaults_and_is_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../homa.conf");
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    if std::env::var_os("HOMA_UPDATE_CONF").is_some() {
        std::fs::write(path, config::example()).unwrap();
    } else {
        assert_eq!(
            committed,
            config::example(),
            "homa.conf is stale: run HOMA_UPDATE_CONF=1 cargo test -p homa-host --test config"
        );
    }
    let conf = HomaConf::parse(&config::example(), "example").unwrap();
    for (t, v) in conf.iter() {
        assert_eq!(v, t.default, "{}", t.name);
    }
    assert_eq!(conf.iter().count(), TUNABLES.len());
    // Every key is in it, uncommented.
    for t in TUNABLES {
        assert!(conf.line(t.name).is_some(), "{} missing", t.name);
    }
}

#[test]
fn a_good_file_overrides_only_what_it_sets() {
    let conf = HomaConf::parse(
        "# comment\nendpoint_bpages = 8\n\nendpoint_tx_ring_entries = 0x10\nunsched_bytes = 40_000\n",
        "good",
    )
    .unwrap();
    assert_eq!(conf.get("endpoint_bpages"), [8]);
    assert_eq!(conf.line("endpoint_bpages"), Some(2));
    assert_eq!(
        conf.endpoint(EndpointSetting::TxRingEntries),
        16,
        "hex is TOML"
    );
    assert_eq!(
        conf.get("endpoint_completion_ring_entries"),
        [256],
        "default"
    );
    assert_eq!(conf.line("endpoint_completion_ring_entries"), None);
}

#[test]
fn a_syntax_error_names_its_line() {
    let p = problem("endpoint_bpages = 8\nmax_overcommit = = 3\n");
    assert_eq!(p.line, Some(2), "{p}");
    assert!(p.message.contains("not valid TOML"), "{p}");
}

#[test]
fn a_key_given_twice_is_refused_at_its_second_line() {
    let p = problem("endpoint_bpages = 8\n\nendpoint_bpages = 9\n");
    assert_eq!(p.line, Some(3), "{p}");
    assert!(p.message.contains("duplicate"), "{p}");
}

#[test]
fn an_unknown_key_is_named_with_the_nearest_one() {
    let p = problem("window = 0\nmax_overcomit = 8\n");
    assert_eq!(p.key, "max_overcomit");
    assert_eq!(p.line, Some(2));
    assert!(p.message.contains("did you mean `max_overcommit`"), "{p}");
    assert!(p.allowed.unwrap().contains("unsched_cutoffs"));
    let p = problem("colour = 3\n");
    assert_eq!(p.message, "unknown key", "nothing near");
}

#[test]
fn a_value_out_of_range_names_the_range() {
    let p = problem("\nendpoint_bpages = 1025\n");
    assert_eq!((p.key.as_str(), p.line), ("endpoint_bpages", Some(2)));
    assert_eq!(p.message, "1025 is out of range");
    assert_eq!(p.allowed.as_deref(), Some("1..=1024"));
    assert_eq!(problem("endpoint_bpages = 0").message, "0 is out of range");
    assert_eq!(
        problem("endpoint_bpages = -1").message,
        "-1 is out of range"
    );
    assert_eq!(
        problem("endpoint_bpages = 4294967296").message,
        "4294967296 is out of range",
        "past u32"
    );
}

#[test]
fn a_ring_size_must_be_a_power_of_two() {
    let p = problem("endpoint_tx_ring_entries = 48");
    assert_eq!(p.message, "48 is not a power of two");
    assert_eq!(p.allowed.as_deref(), Some("a power of two in 2..=1024"));
}

#[test]
fn a_value_of_the_wrong_type_is_refused() {
    for (source, found) in [
        ("endpoint_bpages = \"8\"", "a string where an integer goes"),
        ("endpoint_bpages = 8.0", "a float where an integer goes"),
        ("endpoint_bpages = true", "a boolean where an integer goes"),
        ("endpoint_bpages = [8]", "an array where an integer goes"),
        (
            "unsched_cutoffs = 200",
            "an integer where an array of 8 integers goes",
        ),
        (
            "unsched_cutoffs = [0, 0, 0, 0, 1000000, 15000, 2800, \"200\"]",
            "a string where an integer goes",
        ),
    ] {
        let p = problem(source);
        assert_eq!(p.message, found, "{source}");
        assert_eq!(p.line, Some(1));
    }
}

#[test]
fn an_array_of_the_wrong_length_is_refused() {
    let p = problem("unsched_cutoffs = [1000000, 15000, 2800, 200]");
    assert_eq!(p.message, "an array of 4 values; it takes 8");
    assert_eq!(
        p.allowed.as_deref(),
        Some("only [0, 0, 0, 0, 1000000, 15000, 2800, 200] on this card")
    );
}

#[test]
fn a_table_is_refused_the_file_is_flat() {
    let p = problem("[endpoint]\nbpages = 8\n");
    assert_eq!(p.key, "endpoint");
    assert_eq!(p.line, Some(1));
    assert!(p.message.contains("unknown key"), "{p}");
    let p = problem("endpoint_bpages = { value = 8 }");
    assert!(p.message.contains("homa.conf is flat"), "{p}");
}

#[test]
fn a_value_fixed_in_the_rtl_may_be_restated_not_changed() {
    assert!(HomaConf::parse("pacer_fifo_fraction = 50\nmax_overcommit = 4\n", "t").is_ok());
    let p = problem("max_overcommit = 4\npacer_fifo_fraction = 100\n");
    assert_eq!((p.key.as_str(), p.line), ("pacer_fifo_fraction", Some(2)));
    assert_eq!(
        p.message,
        "the card refuses 100: built into the TX engine's RTL (homa_hw::tx::engine::PACER_FIFO_FRACTION)"
    );
    assert_eq!(p.allowed.as_deref(), Some("only 50 on this card"));
    // Range first: a value no card takes says so.
    assert_eq!(problem("max_overcommit = 0").message, "0 is out of range");
    assert_eq!(problem("max_overcommit = 9").message, "9 is out of range");
}

#[test]
fn a_completion_ring_too_small_for_its_endpoint_is_refused() {
    let p = problem("endpoint_tx_ring_entries = 64\nendpoint_bpages = 32\nendpoint_completion_ring_entries = 64\n");
    assert_eq!(
        (p.key.as_str(), p.line),
        ("endpoint_completion_ring_entries", Some(3))
    );
    assert!(
        p.message
            .contains("64 TX entries and 32 bpages (96 at once)"),
        "{p}"
    );
    assert_eq!(
        p.allowed.as_deref(),
        Some("a power of two >= endpoint_tx_ring_entries + endpoint_bpages = 96")
    );
    // The same sizes with room are fine.
    assert!(HomaConf::parse("endpoint_tx_ring_entries = 64\nendpoint_bpages = 32\nendpoint_completion_ring_entries = 128\n", "t").is_ok());
}

/// The grant scheduler's keys as they will be once they are registers (the
/// table's shape after issue 8), to test the rules across them now.
static SCHEDULER: &[Tunable] = &[
    Tunable {
        name: "num_priorities",
        target: Target::Csr {
            block_type: block_type::SCRATCH,
            offset: 0x40,
        },
        shape: Shape::Scalar,
        default: &[8],
        min: 1,
        max: 8,
        help: "",
    },
    Tunable {
        name: "max_sched_prio",
        target: Target::Csr {
            block_type: block_type::SCRATCH,
            offset: 0x44,
        },
        shape: Shape::Scalar,
        default: &[3],
        min: 0,
        max: 7,
        help: "",
    },
    Tunable {
        name: "window",
        target: Target::Csr {
            block_type: block_type::SCRATCH,
            offset: 0x48,
        },
        shape: Shape::Scalar,
        default: &[0],
        min: 0,
        max: 1_000_000,
        help: "",
    },
    Tunable {
        name: "max_incoming",
        target: Target::Csr {
            block_type: block_type::SCRATCH,
            offset: 0x4c,
        },
        shape: Shape::Scalar,
        default: &[400_000],
        min: 1,
        max: 100_000_000,
        help: "",
    },
];

#[test]
fn combinations_across_the_scheduler_keys_are_refused() {
    let e = HomaConf::parse_with(
        SCHEDULER,
        "num_priorities = 4\nmax_sched_prio = 5\nmax_incoming = 10000\nwindow = 20000\n",
        "sched.conf",
    )
    .unwrap_err();
    assert_eq!(e.problems.len(), 2, "{e}");
    assert_eq!(e.problems[0].key, "max_sched_prio");
    assert_eq!(e.problems[0].line, Some(2));
    assert_eq!(e.problems[0].allowed.as_deref(), Some("0..=3"));
    assert_eq!(e.problems[1].key, "window");
    assert_eq!(e.problems[1].line, Some(4));
    assert_eq!(
        e.problems[1].allowed.as_deref(),
        Some("0 (dynamic) or 1..=10000")
    );
    let text = e.to_string();
    assert!(
        text.starts_with("sched.conf: 2 problems\n  line 2: max_sched_prio: "),
        "{text}"
    );
    assert!(HomaConf::parse_with(SCHEDULER, "window = 10000\nmax_incoming = 10000\n", "t").is_ok());
}

#[test]
fn every_problem_of_a_file_is_reported_in_line_order() {
    let e = HomaConf::parse(
        "endpoint_bpages = 1025\nbogus = 1\nendpoint_tx_ring_entries = 3\nmax_incoming = 0\n",
        "many.conf",
    )
    .unwrap_err();
    let lines: Vec<Option<usize>> = e.problems.iter().map(|p| p.line).collect();
    assert_eq!(lines, [Some(1), Some(2), Some(3), Some(4)], "{e}");
    // Combination rules run only on a file whose keys are each fine.
}

#[test]
fn an_unreadable_file_says_so() {
    let e = HomaConf::load(std::path::Path::new("/nonexistent/homa.conf")).unwrap_err();
    assert_eq!(e.origin, "/nonexistent/homa.conf");
    assert!(
        e.problems[0].message.starts_with("cannot read the file"),
        "{e}"
    );
}

/// Two registers of the scratch block: a read/write one, and a read-only
/// one (the card "refuses" any value but what it computes).
static SCRATCH_TUNABLES: &[Tunable] = &[
    Tunable {
        name: "scratch",
        target: Target::Csr {
            block_type: block_type::SCRATCH,
            offset: scratch::SCRATCH,
        },
        shape: Shape::Scalar,
        default: &[0],
        min: 0,
        max: u32::MAX,
        help: "",
    },
    Tunable {
        name: "scratch_inverted",
        target: Target::Csr {
            block_type: block_type::SCRATCH,
            offset: scratch::SCRATCH_INVERTED,
        },
        shape: Shape::Scalar,
        default: &[u32::MAX],
        min: 0,
        max: u32::MAX,
        help: "",
    },
];

static MISSING_BLOCK: &[Tunable] = &[
    SCRATCH_TUNABLES[0],
    Tunable {
        name: "max_overcommit",
        target: Target::Csr {
            block_type: 0x484d_00ff,
            offset: 0x0c,
        },
        shape: Shape::Scalar,
        default: &[8],
        min: 1,
        max: 64,
        help: "",
    },
];

#[test]
fn register_tunables_are_written_and_read_back_live() {
    let conf = HomaConf::parse_with(
        SCRATCH_TUNABLES,
        "scratch = 0x1234\nscratch_inverted = 0xffffedcb\n",
        "s",
    )
    .unwrap();
    let nic = Nic::open_with_config(SimBackend::new(), conf).unwrap();
    assert_eq!(nic.device().scratch().unwrap().read().unwrap(), 0x1234);
    let live = config::read_live(nic.device(), nic.config()).unwrap();
    assert_eq!(live[0].1, Reading::Register(vec![0x1234]));
    assert_eq!(live[1].1, Reading::Register(vec![0xffff_edcb]));
}

#[test]
fn a_value_the_card_refuses_leaves_every_register_as_it_was() {
    let nic = Nic::open_with_config(
        SimBackend::new(),
        HomaConf::parse_with(SCRATCH_TUNABLES, "", "d").unwrap(),
    )
    .unwrap();
    nic.device().scratch().unwrap().write(0x5555).unwrap();
    // scratch is written first and holds; scratch_inverted cannot hold 7.
    let conf = HomaConf::parse_with(
        SCRATCH_TUNABLES,
        "scratch = 0x1234\nscratch_inverted = 7\n",
        "bad.conf",
    )
    .unwrap();
    let e = config::apply(nic.device(), &conf).unwrap_err();
    let Error::Config(ConfigError { origin, problems }) = e else {
        panic!("{e}")
    };
    assert_eq!(origin, "bad.conf");
    assert_eq!(problems[0].key, "scratch_inverted");
    assert_eq!(problems[0].line, Some(2));
    assert_eq!(
        problems[0].message,
        format!(
            "the card refused 7: the register at 0x110 holds {}",
            !0x1234u32
        )
    );
    assert_eq!(
        nic.device().scratch().unwrap().read().unwrap(),
        0x5555,
        "scratch was written, then restored"
    );
}

#[test]
fn a_register_block_the_card_lacks_is_found_before_anything_is_written() {
    let conf = HomaConf::parse_with(
        MISSING_BLOCK,
        "scratch = 9\nmax_overcommit = 4\n",
        "new.conf",
    )
    .unwrap();
    let backend = Arc::new(SimBackend::new());
    let e = Nic::open_with_config(backend.clone(), conf)
        .err()
        .expect("refused");
    let text = e.to_string();
    assert!(
        text.starts_with(
            "new.conf: line 2: max_overcommit: the card has no register block of type 0x484d00ff"
        ),
        "{text}"
    );
    let device = homa_driver::Device::open(backend).unwrap();
    assert_eq!(
        device.scratch().unwrap().read().unwrap(),
        0,
        "scratch never written"
    );
}

#[test]
fn endpoint_sizes_reach_the_card_and_rpcs_run_with_them() {
    let network = Arc::new(Mutex::new(SimNetwork::new(
        "config_sizes",
        2,
        Default::default(),
    )));
    let conf = HomaConf::parse(
        "endpoint_tx_ring_entries = 8\nendpoint_completion_ring_entries = 16\nendpoint_bpages = 8\n",
        "small.conf",
    )
    .unwrap();
    // The client small; the server with room for every request at once (a
    // request finding no bpage is dropped, and nothing retransmits yet).
    let client = Nic::open_sim_with_config(&network, 0, conf).unwrap();
    let server = Nic::open_sim_with_config(&network, 1, HomaConf::default()).unwrap();
    client
        .set_address([2, 0, 0, 0, 0, 1], Ipv4Addr::new(10, 0, 0, 1))
        .unwrap();
    server
        .set_address([2, 0, 0, 0, 0, 2], Ipv4Addr::new(10, 0, 0, 2))
        .unwrap();
    let mut c = Endpoint::open(&client, 1000).unwrap();
    let mut s = Endpoint::open(&server, 99).unwrap();
    let live = config::read_live(client.device(), client.config()).unwrap();
    let endpoints = |name: &str| {
        live.iter()
            .find(|(t, _)| t.name == name)
            .map(|(_, r)| r.clone())
            .unwrap()
    };
    assert_eq!(
        endpoints("endpoint_tx_ring_entries"),
        Reading::Endpoints {
            next: 8,
            open: vec![(1000, 8)]
        }
    );
    assert_eq!(
        endpoints("endpoint_completion_ring_entries"),
        Reading::Endpoints {
            next: 16,
            open: vec![(1000, 16)]
        }
    );
    assert_eq!(
        endpoints("endpoint_bpages"),
        Reading::Endpoints {
            next: 8,
            open: vec![(1000, 8)]
        }
    );
    assert_eq!(endpoints("unsched_bytes"), Reading::Register(vec![40_000]));
    // 8 requests fill the 8-entry ring; the 9th is refused until some are sent.
    let to = Peer::new(server.ip(), server.mac(), 99);
    let ids: Vec<_> = (0..8)
        .map(|i| c.send_request(to, &[i as u8; 100]).unwrap())
        .collect();
    assert!(matches!(
        c.send_request(to, b"x"),
        Err(Error::RingFull { slots: 8 })
    ));
    for _ in 0..8 {
        let r = s.recv_request().unwrap();
        let body = r.message().to_vec();
        s.reply(r.id(), &body).unwrap();
        drop(r);
    }
    for (i, id) in ids.into_iter().enumerate() {
        assert_eq!(
            c.recv_response(id).unwrap().message().to_vec(),
            vec![i as u8; 100]
        );
    }
}
