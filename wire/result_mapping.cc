#include "wire/result_mapping.h"

#include "wire/dtype_mapping.h"
#include "wire/op_mapping.h"

namespace gpureduce::wire {

void ToProto(const OpResult& result, v1::OpResult* out) {
  out->set_op(ToProto(result.op));
  out->set_dtype(ToProto(result.dtype));
  out->set_value(result.value);
  out->set_int_value(result.int_value);
  out->set_index(result.index);
  out->set_overflow(result.overflow);
}

}  // namespace gpureduce::wire
