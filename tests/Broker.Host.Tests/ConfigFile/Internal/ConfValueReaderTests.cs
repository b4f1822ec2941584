using Broker.Host.Configuration.Conf;
using Broker.Host.Configuration.ConfigFile.Internal;
using Broker.Host.Tests.Conf;
using static Broker.Host.Tests.ConfigFile.Internal.MapperTestKit;

namespace Broker.Host.Tests.ConfigFile.Internal;

public sealed class ConfValueReaderTests
{
    private readonly ConfMappingBuilder output = new();
    private readonly ConfValueReader reader;

    public ConfValueReaderTests() => reader = new ConfValueReader(output);

    [Theory]
    [InlineData("k: 1", "interface conversion: interface {} is int64, not string")]
    [InlineData("k: 1.5", "interface conversion: interface {} is float64, not string")]
    [InlineData("k: true", "interface conversion: interface {} is bool, not string")]
    [InlineData("k: {}", "interface conversion: interface {} is map[string]interface {}, not string")]
    [InlineData("k: []", "interface conversion: interface {} is []interface {}, not string")]
    [InlineData("k: 2020-01-02T03:04:05Z", "interface conversion: interface {} is time.Time, not string")]
    public void A_value_of_another_type_is_gos_interface_conversion_at_the_key(string text, string message)
    {
        Assert.False(reader.TryString(Entry("\n  " + text), out _));

        Assert.Equal([$"Error test.conf:2:3: {message}"], Diagnostics(Built(output)));
    }

    [Fact]
    public void Typed_setters_format_values_invariantly()
    {
        reader.SetString(Entry("k: text"), "S");
        reader.SetBool(Entry("k: yes"), "B");
        reader.SetInt32(Entry("k: 2KB"), "I");
        reader.SetInt64(Entry("k: 8GB"), "L");

        Assert.Equal(["B=true", "I=2048", "L=8589934592", "S=text"], Settings(Built(output)));
        Assert.Empty(Built(output).Diagnostics);
    }

    [Fact]
    public void A_32_bit_option_refuses_a_larger_integer()
    {
        Assert.False(reader.TryInt32(Entry("max_payload: 3000000000"), out _));
        Assert.True(reader.TryInt32(Entry("max_payload: -2147483648"), out var low));

        Assert.Equal(int.MinValue, low);
        Assert.Equal(["Error test.conf:1:1: max_payload value is too big"], Diagnostics(Built(output)));
    }

    [Fact]
    public void A_duration_is_a_go_duration_or_with_a_warning_seconds()
    {
        reader.SetDuration(Entry("ping_interval: \"1m30s\""), "ping_interval", "A");
        reader.SetDuration(Entry("ping_interval: 45"), "ping_interval", "B");
        reader.SetDuration(Entry("ping_interval: \"soon\""), "ping_interval", "C");
        reader.SetDuration(Entry("ping_interval: true"), "ping_interval", "D");

        var mapping = Built(output);
        Assert.Equal(["A=00:01:30", "B=00:00:45"], Settings(mapping));
        Assert.Equal(
            [
                "Warning test.conf:1:1: invalid use of field \"ping_interval\": ping_interval should be converted to a duration",
                "Error test.conf:1:1: error parsing ping_interval: time: invalid duration \"soon\"",
                "Error test.conf:1:1: interface conversion: interface {} is bool, not int64",
            ],
            Diagnostics(mapping));
    }

    [Fact]
    public void An_unknown_key_is_an_error_unless_it_served_as_a_variable()
    {
        var entries = Entries("v = 1\nw = 2\nport: $v");

        reader.Unknown(entries[0]);
        reader.Unknown(entries[1]);

        Assert.Equal(["Error test.conf:2:1: unknown field \"w\""], Diagnostics(Built(output)));
    }

    [Fact]
    public void A_forbidden_setting_names_what_the_broker_cannot_enforce()
    {
        reader.Forbidden(Entry("ocsp: true"), "OCSP stapling");

        Assert.Equal(
            ["Error test.conf:1:1: \"ocsp\": not supported (OCSP stapling); the broker does not run without a security setting it cannot enforce"],
            Diagnostics(Built(output)));
    }

    [Fact]
    public void Scalars_are_written_as_plugins_read_them()
    {
        var map = ConfTestKit.Parse("s: text\ni: 1k\nf: 2.50\nb: off\nd: 2020-01-02T03:04:05Z");

        Assert.Equal(
            ["text", "1000", "2.5", "false", "2020-01-02T03:04:05.0000000Z"],
            map.Entries.Select(e => ConfValueText.Scalar(e.Value)));
    }
}
