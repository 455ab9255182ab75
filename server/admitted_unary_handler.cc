#include "server/admitted_unary_handler.h"

#include <utility>

namespace grpc::internal {

using AdmittedUnaryHandler = CallbackBidiHandler<gpureduce::server::AdmittedUnary, ByteBuffer>;

// One call's side of gRPC: the operations its reactor starts, and the end of the call. Lives in
// the call's arena until gRPC (the call's completion op), the reactor's Finish, the handler and
// every started operation are done with it (ServerCallbackCall's count), then runs OnDone.
class AdmittedUnaryHandler::Call final : public ServerCallbackReaderWriter<ByteBuffer, ByteBuffer> {
 public:
  Call(CallbackServerContext* context, internal::Call* call, std::function<void()> request_next)
      : context_(context), call_(*call), request_next_(std::move(request_next)) {}

  // Binds the reactor: what it asked for while it was being made starts now.
  void Start(Reactor* reactor) {
    reactor_ = reactor;
    const bool inline_reactions = reactor->InternalInlineable();
    // A reaction that runs dispatched to the executor may run OnDone there too; one that runs
    // inline is short by the same promise as OnDone.
    read_tag_.Set(
        call_.call(),
        [this, reactor](bool ok) {
          if (!ok) context_->MaybeMarkCancelledOnRead();
          reactor->OnReadDone(ok);
          MaybeDone(/*inline_ondone=*/true);
        },
        &read_ops_, inline_reactions);
    read_ops_.set_core_cq_tag(&read_tag_);
    write_tag_.Set(
        call_.call(),
        [this, reactor](bool ok) {
          reactor->OnWriteDone(ok);
          MaybeDone(/*inline_ondone=*/true);
        },
        &write_ops_, inline_reactions);
    write_ops_.set_core_cq_tag(&write_tag_);
    BindReactor(reactor);
    MaybeCallOnCancel(reactor);
    MaybeDone();  // the handler's part is done
  }

  void Read(ByteBuffer* request) override {
    Ref();
    read_ops_.RecvMessage(request);
    call_.PerformOps(&read_ops_);
  }

  void Write(const ByteBuffer* response, WriteOptions options) override {
    Ref();
    if (options.is_last_message()) options.set_buffer_hint();
    AddInitialMetadata(write_ops_);
    GPR_ASSERT(write_ops_.SendMessagePtr(response, options).ok());
    call_.PerformOps(&write_ops_);
  }

  void WriteAndFinish(const ByteBuffer* response, WriteOptions options, Status status) override {
    GPR_ASSERT(finish_ops_.SendMessagePtr(response, options).ok());
    Finish(std::move(status));
  }

  // Its completion only counts down, so it may always run inline.
  void Finish(Status status) override {
    finish_tag_.Set(
        call_.call(), [this](bool) { MaybeDone(); }, &finish_ops_, /*can_inline=*/true);
    finish_ops_.set_core_cq_tag(&finish_tag_);
    AddInitialMetadata(finish_ops_);
    finish_ops_.ServerSendStatus(&context_->trailing_metadata_, status);
    call_.PerformOps(&finish_ops_);
  }

  void SendInitialMetadata() override {
    GPR_ASSERT(!context_->sent_initial_metadata_);
    Ref();
    metadata_tag_.Set(
        call_.call(),
        [this](bool ok) {
          reactor_->OnSendInitialMetadataDone(ok);
          MaybeDone(/*inline_ondone=*/true);
        },
        &metadata_ops_, reactor_->InternalInlineable());
    metadata_ops_.set_core_cq_tag(&metadata_tag_);
    AddInitialMetadata(metadata_ops_);
    call_.PerformOps(&metadata_ops_);
  }

 private:
  // The call's initial metadata goes with the first operation that sends anything.
  template <typename Ops>
  void AddInitialMetadata(Ops& ops) {
    if (context_->sent_initial_metadata_) return;
    ops.SendInitialMetadata(&context_->initial_metadata_, context_->initial_metadata_flags());
    if (context_->compression_level_set()) ops.set_compression_level(context_->compression_level());
    context_->sent_initial_metadata_ = true;
  }

  ServerReactor* reactor() override { return reactor_; }

  void CallOnDone() override {
    reactor_->OnDone();
    grpc_call* call = call_.call();
    std::function<void()> request_next = std::move(request_next_);
    if (context_->context_allocator() != nullptr) context_->context_allocator()->Release(context_);
    this->~Call();  // the arena frees the memory with the call
    g_core_codegen_interface->grpc_call_unref(call);
    request_next();
  }

  CallbackServerContext* const context_;
  internal::Call call_;
  std::function<void()> request_next_;  // asks gRPC for the method's next call
  // Set in Start, before anything that reads it can run (the counts above order them).
  Reactor* reactor_ = nullptr;

  CallOpSet<CallOpRecvMessage<ByteBuffer>> read_ops_;
  CallbackWithSuccessTag read_tag_;
  CallOpSet<CallOpSendInitialMetadata, CallOpSendMessage> write_ops_;
  CallbackWithSuccessTag write_tag_;
  CallOpSet<CallOpSendInitialMetadata, CallOpSendMessage, CallOpServerSendStatus> finish_ops_;
  CallbackWithSuccessTag finish_tag_;
  CallOpSet<CallOpSendInitialMetadata> metadata_ops_;
  CallbackWithSuccessTag metadata_tag_;
};

void AdmittedUnaryHandler::RunHandler(const HandlerParameter& param) {
  grpc_call* core_call = param.call->call();
  g_core_codegen_interface->grpc_call_ref(core_call);
  auto* context = static_cast<CallbackServerContext*>(param.server_context);
  auto* call = new (g_core_codegen_interface->grpc_call_arena_alloc(core_call, sizeof(Call)))
      Call(context, param.call, param.call_requester);
  context->BeginCompletionOp(
      param.call, [call](bool) { call->MaybeDone(); }, call);

  Reactor* reactor = nullptr;
  if (param.status.ok()) reactor = CatchingReactorGetter<Reactor>(make_reactor_, context);
  if (reactor == nullptr) {  // the factory failed: the call fails, as gRPC's handlers fail it
    using Unimplemented = UnimplementedBidiReactor<ByteBuffer, ByteBuffer>;
    reactor =
        new (g_core_codegen_interface->grpc_call_arena_alloc(core_call, sizeof(Unimplemented)))
            Unimplemented(Status(StatusCode::UNIMPLEMENTED, ""));
  }
  call->Start(reactor);
}

}  // namespace grpc::internal
