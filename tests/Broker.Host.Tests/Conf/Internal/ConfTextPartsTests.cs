using Broker.Host.Configuration.Conf.Internal;

namespace Broker.Host.Tests.Conf.Internal;

// The text of a string with escapes: plain parts, decoded characters and \x bytes joined as UTF-8.
public class ConfTextPartsTests
{
    [Fact]
    public void Starts_without_parts()
    {
        Assert.False(new ConfTextParts().HasParts);
    }

    [Fact]
    public void Joins_text_characters_and_the_tail()
    {
        var parts = new ConfTextParts();
        parts.AddText("a");
        parts.AddChar('\t');
        parts.AddText("b");

        Assert.True(parts.HasParts);
        Assert.Equal("a\tbc", parts.Take("c"));
    }

    [Fact]
    public void Empty_text_marks_parts_without_adding_any()
    {
        var parts = new ConfTextParts();
        parts.AddText("");

        Assert.True(parts.HasParts);
        Assert.Equal("tail", parts.Take("tail"));
    }

    [Fact]
    public void Take_starts_over()
    {
        var parts = new ConfTextParts();
        parts.AddText("first");
        parts.AddByte(0x41);
        Assert.Equal("firstA", parts.Take(""));

        Assert.False(parts.HasParts);
        parts.AddChar('x');
        Assert.Equal("x", parts.Take(""));
    }

    [Fact]
    public void Consecutive_bytes_are_decoded_together_as_utf8()
    {
        var parts = new ConfTextParts();
        parts.AddByte(0xc3);
        parts.AddByte(0xa9);

        Assert.Equal("é!", parts.Take("!"));
    }

    [Fact]
    public void Bytes_that_are_not_utf8_are_latin1()
    {
        var parts = new ConfTextParts();
        parts.AddByte(0xe9);
        parts.AddByte(0x41);

        Assert.Equal("\u00e9A", parts.Take(""));
    }

    [Fact]
    public void A_decoded_character_between_bytes_splits_the_run()
    {
        var parts = new ConfTextParts();
        parts.AddByte(0xc3);
        parts.AddChar('-');
        parts.AddByte(0xa9);

        // Each half alone is not UTF-8, so each byte is one Latin-1 character.
        Assert.Equal("\u00c3-\u00a9", parts.Take(""));
    }

    [Fact]
    public void Text_between_bytes_splits_the_run_but_empty_text_does_not()
    {
        var split = new ConfTextParts();
        split.AddByte(0xc3);
        split.AddText("-");
        split.AddByte(0xa9);
        Assert.Equal("\u00c3-\u00a9", split.Take(""));

        var joined = new ConfTextParts();
        joined.AddByte(0xc3);
        joined.AddText("");
        joined.AddByte(0xa9);
        Assert.Equal("é", joined.Take(""));
    }
}
