#include "client/typed_spec.h"

namespace gpureduce::client {

void SetOpsAndDType(const std::vector<v1::Op>& ops, DType dtype, double ddof,
                    v1::ReduceSpec& spec) {
  spec.clear_op();
  spec.clear_ops();
  if (ops.size() == 1) {
    spec.set_op(ops.front());
  } else {
    for (const v1::Op op : ops) spec.add_ops(op);
  }
  if (dtype != DType::kFloat32) spec.set_dtype(static_cast<v1::DType>(static_cast<int>(dtype)));
  if (ddof != 0) spec.set_ddof(ddof);
}

}  // namespace gpureduce::client
