using Broker.Host.Configuration.Conf;
using Broker.Host.Configuration.Conf.Internal;

namespace Broker.Host.Tests.Conf.Internal;

// The lexer's position in the text: reads, backups at the end, the pending text and the line table.
public class ConfCursorTests
{
    [Fact]
    public void Reads_characters_then_the_end_forever()
    {
        var cursor = new ConfCursor("ab", "f.conf");

        Assert.Equal('a', cursor.Read());
        Assert.Equal('b', cursor.Read());
        Assert.False(cursor.AtEnd);
        Assert.Equal(ConfChars.Eof, cursor.Read());
        Assert.True(cursor.AtEnd);
        Assert.Equal(ConfChars.Eof, cursor.Read());
        Assert.Equal(2, cursor.Position);
    }

    [Fact]
    public void Backup_undoes_a_read_but_not_the_end()
    {
        var cursor = new ConfCursor("ab", "");
        cursor.Read();
        cursor.Read();
        cursor.Backup();
        Assert.Equal(1, cursor.Position);
        Assert.Equal('b', cursor.Read());

        // Reading the end has width 0: backing up stays at the end, and Last is the end itself.
        Assert.Equal(ConfChars.Eof, cursor.Read());
        Assert.Equal(2, cursor.Last);
        cursor.Backup();
        Assert.Equal(2, cursor.Position);
    }

    [Fact]
    public void Last_is_the_index_of_the_character_just_read()
    {
        var cursor = new ConfCursor("xyz", "");
        cursor.Read();
        cursor.Read();
        Assert.Equal(1, cursor.Last);
        Assert.Equal('z', cursor.Peek());
        Assert.Equal(2, cursor.Position);
    }

    [Fact]
    public void Peek_and_At_answer_the_end_outside_the_input()
    {
        var cursor = new ConfCursor("a", "");
        Assert.Equal('a', cursor.Peek());
        cursor.Read();
        Assert.Equal(ConfChars.Eof, cursor.Peek());
        Assert.Equal(ConfChars.Eof, cursor.At(-1));
        Assert.Equal(ConfChars.Eof, cursor.At(1));
        Assert.Equal('a', cursor.At(0));
    }

    [Fact]
    public void Pending_text_runs_from_the_last_ignore()
    {
        var cursor = new ConfCursor("key value", "");
        for (var i = 0; i < 4; i++)
        {
            cursor.Read();
        }

        Assert.Equal("key ", cursor.PendingText);
        cursor.Ignore();
        Assert.False(cursor.HasPending);
        Assert.Equal(4, cursor.PendingStart);
        cursor.Read();
        cursor.Read();
        Assert.True(cursor.HasPending);
        Assert.Equal(2, cursor.PendingLength);
        Assert.Equal("va", cursor.PendingText);
        Assert.Equal("v", cursor.Pending(dropLast: 1).ToString());
        cursor.IgnoreFirst();
        Assert.Equal("a", cursor.PendingText);
    }

    [Theory]
    [InlineData("# comment\nnext", 9, '\n')]
    [InlineData("# comment\r\nnext", 9, '\r')]
    [InlineData("# comment", 9, ConfChars.Eof)]
    [InlineData("# a\0b", 3, ConfChars.Eof)]
    public void Ignoring_the_rest_of_a_line_stops_before_its_end(string text, int position, char next)
    {
        var cursor = new ConfCursor(text, "");
        cursor.Read();
        cursor.IgnoreRestOfLine();

        Assert.Equal(position, cursor.Position);
        Assert.Equal(next, cursor.Peek());
        Assert.False(cursor.HasPending);
    }

    [Theory]
    [InlineData(0, 1, 1)]
    [InlineData(2, 1, 3)]
    [InlineData(3, 1, 4)]   // the '\n' itself is on its line
    [InlineData(4, 2, 1)]
    [InlineData(6, 3, 1)]   // an empty line
    [InlineData(7, 4, 1)]
    [InlineData(9, 4, 3)]   // '\r' does not end a line
    [InlineData(11, 4, 5)]  // the end of the input
    public void Positions_are_1_based_lines_split_on_new_lines_only(int index, int line, int column)
    {
        var cursor = new ConfCursor("abc\nd\n\ne\rfg", "dir/f.conf");

        Assert.Equal(new ConfPosition("dir/f.conf", line, column), cursor.PositionOf(index));
    }

    [Fact]
    public void Fail_reports_the_position_of_an_index()
    {
        var cursor = new ConfCursor("a\nbc", "f.conf");

        var error = cursor.Fail(3, "bad");

        Assert.Equal("f.conf:2:2: bad", error.Message);
        Assert.Equal("bad", error.Reason);
    }
}
