# Runs a Homa NIC board build script in plain tclsh, with every Vivado command
# it uses replaced by a checking stub. Usage:
#     tclsh vivado_stub.tcl BUILD_DIR/build.tcl
# Exits 0 and prints one summary line when the script, its IP TCL and its XDC
# use only known commands, existing files, ports of the top module, well-formed
# and unique package pins, and IP properties this file knows for each IP.
# Otherwise exits 1 naming the first problem. Nothing here knows what Vivado
# would do with the design: it catches the mistakes that would otherwise cost
# a Vivado run to find.

proc fail {msg} {
    puts stderr "vivado_stub: $msg"
    exit 1
}

# ---- IP properties known to exist, by IP (PG213 and Corundum's PCIe script;
# PG203 and OpenNIC's CMAC scripts). Compared case-insensitively, as Vivado does.
set known_props(pcie4_uscale_plus) {
    mode_selection pcie_blk_locn PL_LINK_CAP_MAX_LINK_SPEED PL_LINK_CAP_MAX_LINK_WIDTH
    axisten_if_width axisten_freq AXISTEN_IF_EXT_512_CQ_STRADDLE AXISTEN_IF_EXT_512_RQ_STRADDLE
    AXISTEN_IF_EXT_512_RC_STRADDLE AXISTEN_IF_EXT_512_RC_4TLP_STRADDLE
    axisten_if_enable_client_tag extended_tag_field
    pf0_dev_cap_max_payload PF0_Use_Class_Code_Lookup_Assistant PF0_CLASS_CODE vendor_id
    PF0_DEVICE_ID PF0_SUBSYSTEM_VENDOR_ID PF0_SUBSYSTEM_ID pf0_bar0_64bit
    pf0_bar0_prefetchable pf0_bar0_scale pf0_bar0_size pf0_msi_enabled pf0_msix_enabled
    PF0_MSIX_CAP_TABLE_SIZE PF0_MSIX_CAP_TABLE_BIR PF0_MSIX_CAP_TABLE_OFFSET
    PF0_MSIX_CAP_PBA_BIR PF0_MSIX_CAP_PBA_OFFSET MSI_X_OPTIONS
}
set known_props(pcie4c_uscale_plus) $known_props(pcie4_uscale_plus)
set known_props(cmac_usplus) {
    CMAC_CAUI4_MODE NUM_LANES GT_REF_CLK_FREQ USER_INTERFACE GT_DRP_CLK ENABLE_AXI_INTERFACE
    INCLUDE_STATISTICS_COUNTERS INCLUDE_RS_FEC ENABLE_PIPELINE_REG INS_LOSS_NYQ
    CMAC_CORE_SELECT GT_GROUP_SELECT LANE1_GT_LOC LANE2_GT_LOC LANE3_GT_LOC LANE4_GT_LOC
    LANE5_GT_LOC LANE6_GT_LOC LANE7_GT_LOC LANE8_GT_LOC LANE9_GT_LOC LANE10_GT_LOC
    RX_MIN_PACKET_LEN RX_MAX_PACKET_LEN RX_FLOW_CONTROL TX_FLOW_CONTROL GT_LOCATION
    ENABLE_TIME_STAMPING
}

# Design properties the XDC may set on [current_design], and values for some.
set design_props {
    CONFIG_VOLTAGE CFGBVS CONFIG_MODE BITSTREAM.CONFIG.SPI_BUSWIDTH
    BITSTREAM.CONFIG.SPI_32BIT_ADDR BITSTREAM.CONFIG.SPI_FALL_EDGE
    BITSTREAM.CONFIG.CONFIGFALLBACK BITSTREAM.GENERAL.COMPRESS
    BITSTREAM.CONFIG.EXTMASTERCCLK_EN BITSTREAM.CONFIG.UNUSEDPIN
    BITSTREAM.CONFIG.OVERTEMPSHUTDOWN BITSTREAM.CONFIG.CONFIGRATE
}
set iostandards {LVCMOS12 LVCMOS18 LVDS DIFF_SSTL12}
set port_props {PACKAGE_PIN IOSTANDARD PULLUP PULLDOWN}

set state(part) ""
set state(verilog) {}
set state(top_ports) {}
set state(ips) {}
set state(synth_top) ""
set state(steps) {}
array set pins {}
array set ip_module {}

proc need_file {path} {
    if {![file exists $path]} { fail "no such file: $path" }
}

proc step {name} {
    global state
    lappend state(steps) $name
}

# ---- the part ----
proc set_part {part} {
    global state
    if {![regexp {^xcu(50|55c|200|250|280)-[a-z0-9]+-[0-9]L?-e$} $part]} {
        fail "set_part: $part is not an Alveo part we build for"
    }
    set state(part) $part
}

# ---- sources ----
proc read_verilog {args} {
    global state
    set path [lindex $args end]
    need_file $path
    lappend state(verilog) $path
}

# Ports of module `top`: the list in its header, `module top(a,b,c);`.
proc ports_of {top} {
    global state
    foreach path $state(verilog) {
        set f [open $path]
        set text [read $f]
        close $f
        if {[regexp "(^|\n)module [string map {$ \\$} $top]\\((\[^)\]*)\\);" $text -> _ list]} {
            return [split [string map {" " "" "\n" ""} $list] ,]
        }
    }
    return {}
}

proc read_xdc {path} {
    global state
    need_file $path
    if {$state(synth_top) eq "" && [llength $state(verilog)] == 0} {
        fail "read_xdc before read_verilog: the XDC's ports cannot be checked"
    }
    # The XDC is Tcl: run it with the constraint stubs below, against the
    # ports of the module the script will synthesize.
    set state(xdc_top) [xdc_top]
    set state(top_ports) [ports_of $state(xdc_top)]
    if {[llength $state(top_ports)] == 0} { fail "no module $state(xdc_top) in the Verilog read" }
    uplevel #0 [list source $path]
}

# The top module: the build script's synth_design -top, found by peeking.
proc xdc_top {} {
    global build_script
    set f [open $build_script]
    set text [read $f]
    close $f
    if {![regexp {synth_design\s+-top\s+(\S+)} $text -> top]} { fail "no synth_design -top in $build_script" }
    return $top
}

# ---- constraint commands ----
proc get_ports {name} {
    global state
    foreach n $name {
        if {[lsearch -exact $state(top_ports) $n] < 0} {
            fail "get_ports $n: no such port on $state(xdc_top)"
        }
    }
    return [list port $name]
}
proc current_design {} { return [list design] }
proc get_cells {args} { return [list cells $args] }
proc get_pins {args} { return [list pins $args] }
proc get_clocks {args} { return [list clocks $args] }

proc set_property {args} {
    global state known_props design_props iostandards port_props pins ip_module
    if {[lindex $args 0] eq "-dict"} {
        set dict [lindex $args 1]
        set target [lindex $args 2]
        if {[lindex $target 0] ne "ip"} { fail "set_property -dict on $target: only IPs expected" }
        set ip [lindex $target 1]
        set kind $ip_module($ip)
        set known [string tolower $known_props($kind)]
        foreach {key value} $dict {
            if {![string match -nocase CONFIG.* $key]} { fail "$ip: $key is not a CONFIG property" }
            set prop [string tolower [string range $key 7 end]]
            if {[lsearch -exact $known $prop] < 0} { fail "$ip ($kind): unknown property $key" }
            if {$value eq ""} { fail "$ip: $key has no value" }
        }
        return
    }
    lassign $args prop value target
    switch -- [lindex $target 0] {
        design {
            if {[lsearch -exact $design_props $prop] < 0} { fail "set_property $prop on the design: unknown property" }
        }
        port {
            if {[lsearch -exact $port_props $prop] < 0} { fail "set_property $prop on a port: unknown property" }
            set port [lindex $target 1]
            switch -- $prop {
                PACKAGE_PIN {
                    if {![regexp {^[A-Z]{1,2}[0-9]{1,2}$} $value]} { fail "$port: $value is not a package pin" }
                    if {[info exists pins($value)]} { fail "pin $value given to $pins($value) and $port" }
                    set pins($value) $port
                }
                IOSTANDARD {
                    if {[lsearch -exact $iostandards $value] < 0} { fail "$port: unknown IOSTANDARD $value" }
                }
            }
        }
        cells {
            if {$prop ne "ASYNC_REG"} { fail "set_property $prop on cells: not expected" }
        }
        ip {
            set ip [lindex $target 1]
            set kind $ip_module($ip)
            if {![string match -nocase CONFIG.* $prop]} { fail "$ip: $prop is not a CONFIG property" }
            set known [string tolower $known_props($kind)]
            if {[lsearch -exact $known [string tolower [string range $prop 7 end]]] < 0} {
                fail "$ip ($kind): unknown property $prop"
            }
        }
        default { fail "set_property on $target: unknown target" }
    }
}

proc create_clock {args} {
    if {[lsearch -exact $args -period] < 0} { fail "create_clock without -period" }
    set period [lindex $args [expr {[lsearch -exact $args -period] + 1}]]
    if {![string is double -strict $period] || $period <= 0} { fail "create_clock: bad period $period" }
}
proc set_false_path {args} {}
proc set_max_delay {args} {
    set d [lsearch -regexp -inline $args {^[0-9.]+$}]
    if {$d eq ""} { fail "set_max_delay without a delay" }
}
proc set_operating_conditions {args} {
    if {[lindex $args 0] ne "-design_power_budget" || ![string is integer -strict [lindex $args 1]]} {
        fail "set_operating_conditions $args: expected -design_power_budget W"
    }
}

# ---- IP ----
proc create_ip {args} {
    global known_props ip_module state
    array set a $args
    foreach k {-name -vendor -library -module_name} {
        if {![info exists a($k)]} { fail "create_ip without $k" }
    }
    if {![info exists known_props($a(-name))]} { fail "create_ip: unknown IP $a(-name)" }
    set ip_module($a(-module_name)) $a(-name)
    lappend state(ips) $a(-module_name)
}
proc get_ips {{name *}} {
    global ip_module state
    if {$name eq "*"} { return $state(ips) }
    if {![info exists ip_module($name)]} { fail "get_ips $name: no such IP created" }
    return [list ip $name]
}
proc generate_target {what ip} {
    global ip_module
    if {![info exists ip_module($ip)]} { fail "generate_target: no IP $ip" }
}
proc synth_ip {ip} { generate_target all $ip }

# ---- the flow ----
proc synth_design {args} {
    global state
    array set a $args
    if {$a(-part) ne $state(part)} { fail "synth_design -part $a(-part) differs from set_part $state(part)" }
    if {[llength [ports_of $a(-top)]] == 0} { fail "synth_design -top $a(-top): no such module in the Verilog read" }
    set state(synth_top) $a(-top)
    step synth
}
foreach cmd {opt_design place_design phys_opt_design route_design} {
    proc $cmd {args} "step $cmd"
}
proc write_checkpoint {args} {}
proc report_utilization {args} {}
proc report_timing_summary {args} {}
proc write_bitstream {args} {
    global state
    if {[lsearch $state(steps) route_design] < 0} { fail "write_bitstream before route_design" }
    step write_bitstream
}
proc write_cfgmem {args} {
    global state
    set i [lsearch -exact $args -loadbit]
    if {$i < 0} { fail "write_cfgmem without -loadbit" }
    set loadbit [lindex $args [expr {$i + 1}]]
    if {![regexp {^up 0x01002000 \S+\.bit$} $loadbit]} {
        fail "write_cfgmem -loadbit \"$loadbit\": must load the .bit at the user-image address 0x01002000"
    }
    foreach {flag want} {-size 128 -interface SPIx4} {
        set j [lsearch -exact $args $flag]
        if {$j < 0 || [lindex $args [expr {$j + 1}]] ne $want} { fail "write_cfgmem: $flag must be $want" }
    }
    set j [lsearch -exact $args -format]
    set format [string tolower [lindex $args [expr {$j + 1}]]]
    if {$j < 0 || [lsearch -exact {mcs bin} $format] < 0} { fail "write_cfgmem: -format mcs or bin" }
    step "cfgmem_$format"
}

# ---- run ----
if {$argc != 1} { fail "usage: tclsh vivado_stub.tcl BUILD_DIR/build.tcl" }
set build_script [lindex $argv 0]
need_file $build_script
# Vivado commands the script might use that are not stubbed fail here, as
# unknown commands, rather than passing unnoticed.
source $build_script
foreach s {synth route_design write_bitstream cfgmem_mcs cfgmem_bin} {
    if {[lsearch -exact $state(steps) $s] < 0} { fail "the script never reaches $s" }
}
if {[llength $state(ips)] < 2} { fail "expected the PCIe and CMAC IPs, got: $state(ips)" }
puts "vivado_stub: ok: $state(synth_top) for $state(part), IPs: $state(ips), [array size pins] pins"
