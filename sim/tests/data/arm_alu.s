@ Instructions used by sim/tests/arm_alu.rs (one per line, each at its own address).
@ Assembled with: arm-none-eabi-as -mcpu=xscale (ARMv5TE + XScale); encodings read back with
@ arm-none-eabi-objdump -d. Lines with .inst are encodings gas refuses (UNPREDICTABLE forms),
@ hand-derived from the valid form named in the comment.
	.arm
	.syntax unified
	adds r2, r0, r1
	add r2, r0, r1
	adcs r2, r0, r1
	adc r2, r0, r1
	cmn r0, r1
	subs r2, r0, r1
	cmp r0, r1
	cmp r0, #1
	sbc r2, r0, r1
	sbcs r2, r0, r1
	rsb r2, r0, #0
	rsbs r2, r0, #0
	rsc r2, r0, r1
	rscs r2, r0, r1
	ands r2, r0, #0xFF000000
	movs r2, #1
	movs r2, #0
	orrs r2, r0, #0x104
	eors r2, r0, r1
	bic r2, r0, #0xFF
	mvns r2, r0
	tst r0, r1, lsl #1
	teq r0, r0
	movs r2, r0, lsr #32
	movs r2, r0, asr #32
	movs r2, r0, rrx
	movs r2, r0, lsl #1
	movs r2, r0, ror #4
	add r2, r0, r1, lsl #2
	movs r2, r0, lsl r1
	movs r2, r0, lsr r1
	movs r2, r0, asr r1
	movs r2, r0, ror r1
	mov r2, r0, lsl r1
	mov r1, pc
	add r0, pc, #4
	add r2, pc, r3, lsl r4
	mov pc, r0
	add pc, pc, r0, lsl #2
	mov pc, lr
	subs pc, lr, #4
	movs pc, lr
	addeq r0, r0, #1
	addne r0, r0, #2
	bne .+0x100
	movseq pc, lr
	add r0, r0, #1
	mrs r0, cpsr
	mrs r0, spsr
	mrs r3, spsr
	msr cpsr_fc, r0
	msr cpsr_c, #0xd3
	msr cpsr_c, #0xd2
	msr cpsr_f, #0x40000000
	msr cpsr_sx, r1
	msr cpsr_c, r2
	msr spsr_fsxc, r0
	msr spsr_f, r1
	msr spsr_c, #0x10
