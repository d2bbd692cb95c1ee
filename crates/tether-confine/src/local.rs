//! Addresses that would take an allowed name back into this machine
//! (issue 36): a name on the allowlist that resolves to loopback,
//! link-local, the unspecified address, or one of this machine's own
//! addresses would reach the services outside the fence (another
//! daemon's TCP port, a database on loopback, the cloud's metadata
//! service on 169.254.169.254). The proxy refuses such an address unless
//! the allowlist names it itself (`127.0.0.1:8080`, `[::1]:8080`).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};

/// Why an address is this machine's, or next to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Near {
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// `169.254.0.0/16`, `fe80::/10` (the metadata service of clouds).
    LinkLocal,
    /// `0.0.0.0/8`, `::` (a connect to it reaches this machine).
    Unspecified,
    /// An address of one of this machine's interfaces.
    ThisMachine,
}

impl Near {
    /// As a refusal says it.
    pub fn name(self) -> &'static str {
        match self {
            Near::Loopback => "a loopback address",
            Near::LinkLocal => "a link-local address",
            Near::Unspecified => "the unspecified address",
            Near::ThisMachine => "an address of this machine",
        }
    }
}

/// `ip` with an IPv4-mapped or IPv4-compatible IPv6 form made IPv4 (the
/// kernel reaches `::ffff:127.0.0.1` as `127.0.0.1`).
pub fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => compatible(v6).map_or(ip, IpAddr::V4),
        },
        v4 => v4,
    }
}

/// `::a.b.c.d` (deprecated, but still an IPv4 address in IPv6 form);
/// not `::` nor `::1`, which are IPv6's own.
fn compatible(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = v6.segments();
    let v4 = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    (s[..6].iter().all(|x| *x == 0) && s[6] != 0).then_some(v4)
}

/// Why `ip` is near (in the ranges above), by its form alone.
fn by_form(ip: IpAddr) -> Option<Near> {
    match canonical(ip) {
        IpAddr::V4(v4) if v4.is_loopback() => Some(Near::Loopback),
        IpAddr::V4(v4) if v4.is_link_local() => Some(Near::LinkLocal),
        IpAddr::V4(v4) if v4.octets()[0] == 0 => Some(Near::Unspecified),
        IpAddr::V6(v6) if v6.is_loopback() => Some(Near::Loopback),
        IpAddr::V6(v6) if v6.is_unicast_link_local() => Some(Near::LinkLocal),
        IpAddr::V6(v6) if v6.is_unspecified() => Some(Near::Unspecified),
        _ => None,
    }
}

/// Why `ip` is near, `None` for an address elsewhere. This machine's own
/// addresses are those a socket can bind to: the kernel's answer, in the
/// network namespace the proxy connects from, so no interface is missed.
pub fn near(ip: IpAddr) -> Option<Near> {
    let ip = canonical(ip);
    by_form(ip).or_else(|| {
        UdpSocket::bind(SocketAddr::new(ip, 0))
            .is_ok()
            .then_some(Near::ThisMachine)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap_or(IpAddr::V4(Ipv4Addr::BROADCAST))
    }

    #[test]
    fn loopback_link_local_unspecified_and_their_mapped_forms_are_near() {
        for (a, n) in [
            ("127.0.0.1", Near::Loopback),
            ("127.200.3.4", Near::Loopback),
            ("::1", Near::Loopback),
            ("::ffff:127.0.0.1", Near::Loopback),
            ("::127.0.0.1", Near::Loopback),
            ("169.254.169.254", Near::LinkLocal),
            ("::ffff:169.254.1.1", Near::LinkLocal),
            ("fe80::1", Near::LinkLocal),
            ("febf::1", Near::LinkLocal),
            ("0.0.0.0", Near::Unspecified),
            ("0.1.2.3", Near::Unspecified),
            ("::", Near::Unspecified),
            ("::ffff:0.0.0.0", Near::Unspecified),
        ] {
            assert_eq!(near(ip(a)), Some(n), "{a}");
        }
        for far in ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"] {
            assert_eq!(by_form(ip(far)), None, "{far}");
        }
        assert_eq!(canonical(ip("::ffff:8.8.8.8")), ip("8.8.8.8"));
        assert_eq!(canonical(ip("::1")), ip("::1"));
    }

    #[test]
    fn an_address_of_this_machine_is_near() {
        // Whatever this machine's outward address is, the kernel knows it.
        let Ok(probe) = UdpSocket::bind("0.0.0.0:0") else {
            return;
        };
        if probe.connect("192.0.2.1:9").is_err() {
            eprintln!("SKIPPED: no route out to learn this machine's address");
            return;
        }
        let Ok(mine) = probe.local_addr() else { return };
        if by_form(mine.ip()).is_none() {
            assert_eq!(near(mine.ip()), Some(Near::ThisMachine), "{mine}");
        }
    }
}
