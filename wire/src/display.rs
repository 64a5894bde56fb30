//! One line per frame, in the spirit of tcpdump:
//! `10.0.0.1.32768 > 10.0.0.2.99: DATA id 2 prio 7 offset 0 len 1424/40000`.

use std::fmt;

use crate::{Body, Frame};

impl fmt::Display for Frame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.homa.common;
        write!(
            f,
            "{}.{} > {}.{}: {} id {} prio {}",
            self.ip.src,
            c.sport,
            self.ip.dst,
            c.dport,
            self.homa.packet_type().name(),
            c.sender_id,
            self.ip.priority()
        )?;
        match &self.homa.body {
            Body::Data(d) => {
                write!(
                    f,
                    " offset {} len {}/{} incoming {}",
                    d.payload_offset(c),
                    d.payload.len(),
                    d.message_length,
                    d.incoming
                )?;
                if d.retransmit != 0 {
                    write!(f, " retransmit")?;
                }
                if d.ack.client_id != 0 {
                    write!(f, " ack {}:{}", d.ack.client_id, d.ack.server_port)?;
                }
                Ok(())
            }
            Body::Grant(g) => write!(f, " offset {} grant_prio {}", g.offset, g.priority),
            Body::Resend(r) => {
                if r.length == u32::MAX {
                    write!(
                        f,
                        " offset {} length all resend_prio {}",
                        r.offset, r.priority
                    )
                } else {
                    write!(
                        f,
                        " offset {} length {} resend_prio {}",
                        r.offset, r.length, r.priority
                    )
                }
            }
            Body::Cutoffs(c) => {
                write!(
                    f,
                    " version {} cutoffs {:?}",
                    c.cutoff_version, c.unsched_cutoffs
                )
            }
            Body::Ack(a) => {
                write!(f, " acks [")?;
                for (i, e) in a.acks.iter().enumerate() {
                    let sep = if i == 0 { "" } else { ", " };
                    write!(f, "{sep}{}:{}", e.client_id, e.server_port)?;
                }
                write!(f, "]")
            }
            Body::RpcUnknown | Body::Busy | Body::Freeze | Body::NeedAck => Ok(()),
        }
    }
}
