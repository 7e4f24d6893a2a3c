#pragma once
// Per-peer bytes from the kernel's TCP sockets: a PeerTrafficSource for any transport that
// runs over TCP (OpenMPI's TCP BTL, which exec forces for MPI runs).
//
// Why not OpenMPI's monitoring component: Debian 12's OpenMPI 4.1.4 registers the
// pml_monitoring_messages_count / _size performance variables, but the PML framework closes
// the monitoring component after selection (it stays spliced in and dumps at MPI_Finalize
// with pml_monitoring_enable_output), which deregisters them: MPI_T_pvar_get_index returns
// MPI_T_ERR_INVALID_NAME. The coll_monitoring_* variables that do survive count the logical
// payload of a collective to every member (an 8000-byte all-reduce over 4 ranks records 8000
// bytes to each of 3 peers), not what the algorithm sent. docs/exec.md records the probe.
//
// What is counted: for every connected TCP socket of this process, the bytes the application
// wrote into it, tcpi_bytes_acked (linux/tcp.h, RFC 4898 HCThruOctetsAcked) plus the send
// queue still unacknowledged (SIOCOUTQ), so a reading does not depend on when ACKs arrive.
// That is the transport's payload including its own headers (a few dozen bytes per message).
// A socket is attributed to the rank whose socket has the mirrored endpoints (ranks exchange
// their endpoint lists after each reading); sockets to no rank (the launcher's) are ignored.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "exec/traffic.h"

namespace planck::exec {

struct SocketBytes {
  std::uint64_t local = 0, remote = 0;  // endpoint keys (address and port, hashed)
  std::uint64_t written = 0;
};
// This process's connected TCP sockets (an error when /proc/self/fd cannot be read).
core::Result<std::vector<SocketBytes>> tcp_sockets();

std::unique_ptr<PeerTrafficSource> tcp_socket_traffic();

}  // namespace planck::exec
