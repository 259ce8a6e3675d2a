// The building calls of callbacks.c (user data: a cgo.Handle of a *callback).
#include <stdint.h>

#include <kbackend.h>

kb_status kbgo_map_fn(uintptr_t h, kb_tensor* elems, kb_data_type dtype, kb_tensor** out);
kb_status kbgo_fold(uintptr_t h, int32_t right, kb_tensor* elems, kb_tensor* initializer,
                    kb_tensor** out);
kb_status kbgo_register_layer(const char* class_name, uintptr_t h);
kb_status kbgo_set_print_sink(uintptr_t h);
kb_status kbgo_switch_fn(kb_tensor* condition, uintptr_t then_h, uintptr_t else_h, kb_tensor** out);
kb_status kbgo_phase_fn(int32_t test, uintptr_t x_h, uintptr_t alt_h, kb_tensor* training,
                        kb_training mode, kb_tensor** out);
kb_status kbgo_rnn(uintptr_t h, kb_tensor* inputs, kb_tensor* const* initial_states,
                   size_t n_states, int32_t go_backwards, kb_tensor* mask,
                   kb_tensor* const* constants, size_t n_constants, int32_t unroll,
                   kb_tensor** last_output, kb_tensor** outputs, kb_tensor_list** new_states);
kb_status kbgo_model_fit(kb_model* model, kb_tensor* const* x, size_t num_x, kb_tensor* const* y,
                         size_t num_y, int64_t batch_size, int64_t epochs, int32_t verbose,
                         const char* options_json, uintptr_t h, const char** history_json);
