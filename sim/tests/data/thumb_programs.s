@ Small Thumb programs run by sim/tests/thumb_*.rs. Assemble and list with
@   arm-none-eabi-as -march=armv5te -mthumb thumb_programs.s -o /tmp/p.o
@   arm-none-eabi-ld -Ttext=0x8000 /tmp/p.o -o /tmp/p.elf
@   arm-none-eabi-objdump -d /tmp/p.elf     (listing: thumb_programs.lst)
        .syntax unified
        .thumb
        .text
        .global _start
@ sum 1..=10 (thumb_alu.rs)
_start:
        movs    r0, #0
        movs    r1, #10
sum_loop:
        adds    r0, r0, r1
        subs    r1, #1
        bne     sum_loop
        bkpt    #0
@ micro-benchmark loop body of 10 instructions (thumb_bench.rs); r5 -> data, r6 = count
bench:
        adds    r0, r0, r1
        eors    r2, r0
        lsls    r3, r2, #3
        ldr     r4, [r5, #0]
        str     r3, [r5, #4]
        adds    r1, #1
        mov     r8, r1
        cmp     r1, r8
        subs    r6, #1
        bne     bench
        bkpt    #1
@ call/return through the stack, BL pair and POP {pc} (thumb_bench.rs, thumb_branch.rs)
calls:
        bl      leaf
        subs    r6, #1
        bne     calls
        bkpt    #2
leaf:
        push    {r4, lr}
        adds    r4, r0, #1
        ldr     r0, [sp, #0]
        pop     {r4, pc}
