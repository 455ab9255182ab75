// Server reflection answers list_services with the Reducer and the health service, so tools
// such as grpcurl work without the .proto files.

#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/integration/server_process.h"

namespace gpureduce::testing {
namespace {

using ::testing::HasSubstr;

// Waits for the completion-queue event of one operation.
bool Await(grpc::CompletionQueue& queue, void* expected_tag) {
  void* tag = nullptr;
  bool ok = false;
  return queue.Next(&tag, &ok) && tag == expected_tag && ok;
}

TEST(ReflectionTest, ListServicesNamesTheReducerAndHealth) {
  auto server = ServerProcess::Start({});
  SKIP_IF_BACKEND_UNAVAILABLE(server.status());
  ASSERT_TRUE(server.ok()) << server.status();
  grpc::GenericStub stub((*server)->Connect()->channel());
  grpc::CompletionQueue queue;
  grpc::ClientContext context;
  auto call = stub.PrepareCall(
      &context, "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", &queue);
  ASSERT_NE(call, nullptr);
  int tag = 0;
  call->StartCall(&tag);
  ASSERT_TRUE(Await(queue, &tag));

  // ServerReflectionRequest { list_services = "" }: field 7, length-delimited, empty.
  const std::string request_bytes("\x3a\x00", 2);
  grpc::Slice slice(request_bytes);
  grpc::ByteBuffer request(&slice, 1);
  call->Write(request, &tag);
  ASSERT_TRUE(Await(queue, &tag));
  grpc::ByteBuffer response;
  call->Read(&response, &tag);
  ASSERT_TRUE(Await(queue, &tag));
  call->WritesDone(&tag);
  ASSERT_TRUE(Await(queue, &tag));
  grpc::Status status;
  call->Finish(&status, &tag);
  ASSERT_TRUE(Await(queue, &tag));
  EXPECT_TRUE(status.ok()) << status.error_message();

  grpc::Slice flat;
  ASSERT_TRUE(response.DumpToSingleSlice(&flat).ok());
  const std::string text(reinterpret_cast<const char*>(flat.begin()), flat.size());
  EXPECT_THAT(text, HasSubstr("gpureduce.v1.Reducer"));
  EXPECT_THAT(text, HasSubstr("grpc.health.v1.Health"));
  queue.Shutdown();
}

}  // namespace
}  // namespace gpureduce::testing
