# clt-kernels --nv-parse on the H200's first complete report (bench/results/h200/nv_report_first.txt,
# kept for this test; the current one, 0 spills, is nv_report.txt):
# every variant and kernel counted, the 14 spilling kernels found (2 gemm_tiled_tt, 12 mlp_train:
# bench/results/h200/nv_spills.md), no malformed line; one known row checked field by field.
# Run by ctest (nv_report_parse) with TOOL=<clt-kernels> REPORT=<the file>.
execute_process(COMMAND ${TOOL} --nv-parse ${REPORT} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err TIMEOUT 60)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "clt-kernels --nv-parse: status ${rc}: ${err}")
endif()
set(want "nv-resources: 256 variants, 843 kernels, 14 with spills, 0 build failures\n")
if(NOT out MATCHES "${want}$")
  string(REGEX MATCH "nv-resources:[^\n]*" got "${out}")
  message(FATAL_ERROR "summary: expected '${want}', got '${got}'")
endif()
string(REGEX MATCHALL "SPILLS" spills "${out}")
list(LENGTH spills n)
string(REGEX MATCHALL "mlp_train [^\n]*SPILLS" mlp "${out}")
list(LENGTH mlp nm)
if(NOT n EQUAL 14 OR NOT nm EQUAL 12)
  message(FATAL_ERROR "spilling rows: ${n} (mlp_train ${nm}), expected 14 (12)")
endif()
# variant 246 mlp_train: 48 registers, 33808 B smem, 48 B stack, 48 B stores, 64 B loads
if(NOT out MATCHES "\n 246 mlp_fused +mlp_train +sm_90a +48 +33808 +48 +48 +64  SPILLS\n")
  message(FATAL_ERROR "row 246 mlp_train not as in the log")
endif()
