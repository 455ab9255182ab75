#pragma once

// Blocks of a message's floats where the transport left them (runtime/payload_pieces.h), for the
// CPU kernel's tasks: each block is copied into a buffer of the calling thread's, small enough to
// stay in cache while the task reduces it.

#include "kernels/reduce.h"
#include "runtime/payload_pieces.h"

namespace gpureduce::runtime {

kernels::cpu::BlockSource PiecesBlockSource(PayloadPieces pieces);

}  // namespace gpureduce::runtime
