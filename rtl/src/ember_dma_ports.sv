// One memory's ports on the two DMA engines (rule D1: the memory takes r rows a cycle):
// load slot i writes the memory's DMA write port i (when the load selects this memory),
// store slot i's row is the address of its DMA read port i. Slot 0 of the load data is
// the widest row (RB bits); slots 1 and up are SW1 bits apart. ember_npu has one per
// memory.
module ember_dma_ports #(
    parameter int unsigned R = 1,    // the memory's rows a cycle (MEM_<NAME>_DMA_ROWS)
    parameter int unsigned RMAX = 1, // the DMAs' row slots
    parameter int unsigned AW = 1,   // row address bits
    parameter int unsigned B = 8,    // row bits
    parameter int unsigned RB = 8,   // slot 0's bits
    parameter int unsigned SW1 = 8,  // bits of slots 1 and up
    parameter int unsigned WDW = 8,  // the load data's bits
    parameter logic [1:0] MEM_ID = 2'd0
) (
    input logic [RMAX-1:0] ld_we_i,
    input logic [1:0] ld_mem_i,
    input logic [RMAX*32-1:0] ld_row_i,
    input logic [WDW-1:0] ld_wdata_i,
    input logic [RMAX*32-1:0] st_row_i,
    output logic [R-1:0] we_o,
    output logic [R*AW-1:0] waddr_o,
    output logic [R*B-1:0] wdata_o,
    output logic [R*AW-1:0] raddr_o
);
  always_comb
    for (int i = 0; i < R; i++) begin
      we_o[i] = ld_we_i[i] && ld_mem_i == MEM_ID;
      waddr_o[i*AW +: AW] = ld_row_i[32*i +: AW];
      wdata_o[i*B +: B] = i == 0 ? ld_wdata_i[0 +: B] : ld_wdata_i[RB + (i - 1) * SW1 +: B];
      raddr_o[i*AW +: AW] = st_row_i[32*i +: AW];
    end
endmodule
