// Wrapper around FPnew's fpnew_top for the SFV1 harness: the 64-bit FPU of the
// RV64D_Xsflt configuration (fp32, fp64, fp16, fp8 e5m2, bf16; NaN-boxing on),
// combinational add/mul/fma/non-computational/conversion units (DEFAULT_NOREGS),
// and the div/sqrt unit chosen at build time: DIVSQRT = 0 (PULP) or 2 (THMULTI).
module sfv1_top #(
  parameter int unsigned DIVSQRT = 2
) (
  input  logic        clk_i,
  input  logic        rst_ni,
  input  logic [63:0] op_a_i,
  input  logic [63:0] op_b_i,
  input  logic [63:0] op_c_i,
  input  logic [2:0]  rnd_mode_i,
  input  logic [3:0]  op_i,
  input  logic        op_mod_i,
  input  logic [2:0]  src_fmt_i,
  input  logic [2:0]  dst_fmt_i,
  input  logic [1:0]  int_fmt_i,
  input  logic        in_valid_i,
  output logic        in_ready_o,
  output logic [63:0] result_o,
  output logic [4:0]  status_o,
  output logic        out_valid_o,
  input  logic        out_ready_i,
  output logic        busy_o
);
  fpnew_pkg::status_t status;

  fpnew_top #(
    .Features       ( fpnew_pkg::RV64D_Xsflt                      ),
    .Implementation ( fpnew_pkg::DEFAULT_NOREGS                   ),
    .DivSqrtSel     ( fpnew_pkg::divsqrt_unit_t'(DIVSQRT)         ),
    .TagType        ( logic                                       )
  ) i_fpnew (
    .clk_i,
    .rst_ni,
    .operands_i     ( {op_c_i, op_b_i, op_a_i}                    ),
    .rnd_mode_i     ( fpnew_pkg::roundmode_e'(rnd_mode_i)         ),
    .op_i           ( fpnew_pkg::operation_e'(op_i)               ),
    .op_mod_i,
    .src_fmt_i      ( fpnew_pkg::fp_format_e'(src_fmt_i)          ),
    .dst_fmt_i      ( fpnew_pkg::fp_format_e'(dst_fmt_i)          ),
    .int_fmt_i      ( fpnew_pkg::int_format_e'(int_fmt_i)         ),
    .vectorial_op_i ( 1'b0                                        ),
    .tag_i          ( 1'b0                                        ),
    .simd_mask_i    ( '1                                          ),
    .in_valid_i,
    .in_ready_o,
    .flush_i        ( 1'b0                                        ),
    .result_o,
    .status_o       ( status                                      ),
    .tag_o          (                                             ),
    .out_valid_o,
    .out_ready_i,
    .busy_o
  );
  // status_t is {NV, DZ, OF, UF, NX}: bit for bit SoftFloat's flag byte
  // (invalid 16, infinite 8, overflow 4, underflow 2, inexact 1).
  assign status_o = status;
endmodule
