// What the environment asks of the compiler (the KB_* variables of the README's table that
// concern plans), read once per plan: a program may change them between functions.
#pragma once

namespace kb {

struct CompileOptions {
  bool fuse = true;                // KB_FUSE=0: no epilogue or elementwise fusion
  bool arena = true;               // KB_ARENA=0: every value in an allocation of its own
  bool fallback_is_error = false;  // KB_DEVICE_FALLBACK=error: a declined device step fails
  int log_plan = 0;                // KB_LOG_PLAN=1..3: the plan's steps on stderr
  // KB_BUCKET_BYTES: all-reduces of one dtype gathered into buckets of about this size (0: one
  // collective per tensor).
  long long bucket_bytes = 25ll << 20;

  static CompileOptions from_environment();
};

}  // namespace kb
