#include "client/cli/reduce_flags.h"

#include "absl/strings/str_cat.h"
#include "client/cli/array_request.h"
#include "client/cli/command.h"
#include "client/cli/op_list.h"
#include "common/flags.h"
#include "common/reduction/op_name.h"
#include "common/shared_memory_flag.h"

namespace gpureduce::cli {

void RegisterReduceFlags(FlagSet& flags, ReduceFlags* f) {
  flags.AddString("op", &f->op,
                  absl::StrCat("the reduction, one of ", OpChoices(),
                               ", or a comma list of them (sum,min,max,mean,std): one request, "
                               "one read of the data, one result per op in order. The nan forms "
                               "skip NaNs as numpy.nansum and its family do; var and std divide "
                               "by count - --ddof"),
                  "OP[,OP...]");
  flags.AddString("dtype", &f->dtype,
                  absl::StrCat("the input's element type, one of ", DTypeNames(),
                               ". A .npy file says its own (give none, or the same); raw input "
                               "and --random are float32 unless this says otherwise; text is "
                               "float32 only. NumPy has no bfloat16: a uint16 or int16 .npy "
                               "(arr.view(np.uint16) of torch's bfloat16 bits) is read as "
                               "bfloat16 only with --dtype bfloat16. Results are typed as "
                               "NumPy types them (the sum of int32 is an exact int64)"),
                  "NAME");
  flags.AddDouble("ddof", &f->ddof,
                  "var and std (and nanvar, nanstd) divide by count - DDOF, as NumPy's ddof "
                  "(0: the population's; 1: the sample's)",
                  "X");
  RegisterArrayFlags(flags, &f->array);
  flags.AddString("kernel", &f->kernel, "kernel variant ('gpureduce kernels' lists them)", "NAME");
  flags.AddUint32("block-size", &f->block_size, "threads per block; 0 is the kernel's default");
  flags.AddInt64("device", &f->device,
                 "run on this device (as `gpureduce info` numbers them); -1: the server picks the "
                 "one with the fewest bytes outstanding",
                 "N");
  flags.AddByteSize("chunk-size", &f->chunk_bytes,
                    "payload per stream message; larger inputs stream in chunks of this size");
  flags.AddChoice("format", &f->format, {"auto", "npy", "raw", "text"},
                  "input format; auto: .npy by its header, .raw/.bin/.f32 raw little-endian "
                  "float32, .txt/.csv/.tsv and stdin text");
  flags.AddInt64("random", &f->random,
                 "reduce N random values of --dtype instead of a file (floats uniform in "
                 "[-1, 1), rounded to float16 or bfloat16; int32 and int64: multiples of 256 "
                 "uniform in [-2^31, 2^31)); -1 means read a file",
                 "N");
  flags.AddUint64("seed", &f->seed, "seed for --random", "S");
  flags.AddBool("values", &f->values,
                "send `repeated float values` instead of bytes (float32 input only)");
  flags.AddBool("verify", &f->verify,
                "also compute a float64 reference on the client and report the difference; of "
                "an array request every element of every result (the input is then kept in "
                "memory, up to 2 GiB)");
  AddSharedMemoryFlag(
      flags, &f->shared_memory,
      "system (or bare --shared-memory): load the input (any --dtype) into a POSIX "
      "shared-memory object on this host, register it with the server once, reduce it by "
      "reference in one request for every --op, with --ddof (no copy over gRPC), then "
      "unregister and remove it, also on an error or Ctrl-C. The server must run on "
      "this host with --allow-shared-memory; in Docker, /dev/shm must hold the input "
      "(--shm-size). Prints the registration time, the server's and the client's. cuda is "
      "gpureduce-load's and the Python client's: the CLI has no GPU memory to lend");
  flags.AddUint32("streams", &f->streams,
                  "send the input as N streams at once, each a contiguous part on a connection "
                  "of its own, and combine their answers exactly as one stream's (needs an input "
                  "of known length: .npy, raw, --random; with --verify the input is read twice; "
                  "not with --shared-memory, nor with an array request: --shape, --axis, "
                  "--segments). Float32 input and one of the ops sum, prod, min, "
                  "max, mean, sum_squares, argmin, argmax only: the client combines the parts' "
                  "answers itself, and other dtypes and ops (var needs the parts' moments) are "
                  "refused rather than combined approximately");
  AddConnectionFlags(flags, &f->connection);
}

}  // namespace gpureduce::cli
