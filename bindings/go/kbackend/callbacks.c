// The C side of callbacks.go: trampolines with the library's callback types that call the
// exported Go functions, and the building calls that pass them with a cgo.Handle as user data.
#include <stdint.h>
#include <stdlib.h>

#include <kbackend.h>

#include "_cgo_export.h"
#include "callbacks.h"

static kb_status map_trampoline(void* user_data, kb_tensor* x, kb_tensor** out) {
  return kbgoMap((uintptr_t)user_data, x, out);
}

static kb_status fold_trampoline(void* user_data, kb_tensor* acc, kb_tensor* x, kb_tensor** out) {
  return kbgoFold((uintptr_t)user_data, acc, x, out);
}

static kb_status step_trampoline(void* user_data, kb_tensor* input, kb_tensor* const* states,
                                 size_t n, kb_tensor** output, kb_tensor_list** new_states) {
  return kbgoStep((uintptr_t)user_data, input, (kb_tensor**)states, n, output, new_states);
}

static kb_status layer_trampoline(void* user_data, kb_layer* layer, const char* config_json,
                                  kb_tensor* const* inputs, size_t num_inputs, kb_tensor** outputs,
                                  size_t capacity, size_t* num_outputs) {
  return kbgoLayer((uintptr_t)user_data, layer, (char*)config_json, (kb_tensor**)inputs, num_inputs,
                   outputs, capacity, num_outputs);
}

static kb_status branch_trampoline(void* user_data, kb_tensor** out) {
  return kbgoBranch((uintptr_t)user_data, out);
}

kb_status kbgo_switch_fn(kb_tensor* condition, uintptr_t then_h, uintptr_t else_h,
                         kb_tensor** out) {
  return kb_switch_fn(condition, branch_trampoline, (void*)then_h, branch_trampoline, (void*)else_h,
                      out);
}

kb_status kbgo_phase_fn(int32_t test, uintptr_t x_h, uintptr_t alt_h, kb_tensor* training,
                        kb_training mode, kb_tensor** out) {
  if (test)
    return kb_in_test_phase_fn(branch_trampoline, (void*)x_h, branch_trampoline, (void*)alt_h,
                               training, mode, out);
  return kb_in_train_phase_fn(branch_trampoline, (void*)x_h, branch_trampoline, (void*)alt_h,
                              training, mode, out);
}

static void print_trampoline(const char* text, void* user_data) {
  kbgoPrint((uintptr_t)user_data, (char*)text);
}

kb_status kbgo_set_print_sink(uintptr_t h) {
  return h ? kb_set_print_sink(print_trampoline, (void*)h) : kb_set_print_sink(NULL, NULL);
}

kb_status kbgo_register_layer(const char* class_name, uintptr_t h) {
  return kb_model_register_layer(class_name, layer_trampoline, (void*)h);
}

kb_status kbgo_map_fn(uintptr_t h, kb_tensor* elems, kb_data_type dtype, kb_tensor** out) {
  return kb_map_fn(map_trampoline, (void*)h, elems, NULL, dtype, out);
}

kb_status kbgo_fold(uintptr_t h, int32_t right, kb_tensor* elems, kb_tensor* initializer,
                    kb_tensor** out) {
  if (right) return kb_foldr(fold_trampoline, (void*)h, elems, initializer, NULL, out);
  return kb_foldl(fold_trampoline, (void*)h, elems, initializer, NULL, out);
}

kb_status kbgo_rnn(uintptr_t h, kb_tensor* inputs, kb_tensor* const* initial_states,
                   size_t n_states, int32_t go_backwards, kb_tensor* mask,
                   kb_tensor* const* constants, size_t n_constants, int32_t unroll,
                   kb_tensor** last_output, kb_tensor** outputs, kb_tensor_list** new_states) {
  return kb_rnn(step_trampoline, (void*)h, inputs, initial_states, n_states, go_backwards, mask,
                constants, n_constants, unroll, NULL, last_output, outputs, new_states);
}

static int32_t fit_trampoline(void* user_data, int64_t epoch, int64_t batch, const char* logs) {
  return kbgoFit((uintptr_t)user_data, epoch, batch, (char*)logs);
}

kb_status kbgo_model_fit(kb_model* model, kb_tensor* const* x, size_t num_x, kb_tensor* const* y,
                         size_t num_y, int64_t batch_size, int64_t epochs, int32_t verbose,
                         const char* options_json, uintptr_t h, const char** history_json) {
  return kb_model_fit(model, x, num_x, y, num_y, batch_size, epochs, verbose, options_json,
                      h ? fit_trampoline : NULL, (void*)h, history_json);
}
