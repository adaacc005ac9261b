@ A BL pair with a large negative offset (prefix imm11 negative and suffix imm11 near
@ its maximum). Assemble and list with
@   arm-none-eabi-as -march=armv5te -mthumb thumb_farcall.s -o /tmp/f.o
@   arm-none-eabi-ld -Ttext=0x8000 /tmp/f.o -o /tmp/f.elf
@   arm-none-eabi-objdump -d /tmp/f.elf     (listing: thumb_farcall.lst)
        .syntax unified
        .thumb
        .text
        .global _start
_start:
        bx      lr
        .space  0x200002
far_call:
        bl      _start
        bl      far_call
        blx     arm_back
        .balign 4
        .arm
arm_back:
        bx      lr
