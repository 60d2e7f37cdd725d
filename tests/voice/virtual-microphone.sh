#!/usr/bin/env bash
# A virtual microphone for the voice tests: an ALSA configuration with a capture device, "Perch test
# microphone", that plays SPEECH.wav (converted to 48 kHz stereo, a typical laptop microphone's
# native format) and then silence. Programs started with ALSA_CONFIG_PATH=DIR/asound.conf record
# it through the normal ALSA path (cpal included), so the app's own recording code is exercised.
#   usage: virtual-microphone.sh SPEECH.wav DIR   -> prints DIR/asound.conf
# ALSA's `file` plugin reads the raw samples in the format the recorder opens the device with;
# cpal opens this one as 32-bit float (its default configuration for a device that accepts
# anything), so the samples are written as float.
set -euo pipefail
speech=$1
dir=$2
mkdir -p "$dir"
sox "$speech" -r 48000 -c 2 -e floating-point -b 32 -t raw "$dir/mic.raw"
cat >"$dir/asound.conf" <<CONF
</usr/share/alsa/alsa.conf>
pcm.perch_test_microphone {
    type file
    slave.pcm "null"
    file "/dev/null"
    infile "$dir/mic.raw"
    format "raw"
    hint { show on description "Perch test microphone" }
}
CONF
echo "$dir/asound.conf"
